/**
 * Plays the Functions runtime's blob trigger for `npm start`: polls the models container (the local
 * `models/` folder by default, or Azurite with `AzureWebJobsStorage=UseDevelopmentStorage=true`) and,
 * for each new or changed `{name}/{version}.onnx`, invokes the app's registered blob-trigger function
 * exactly as the runtime would (a reference to the blob as `modelBindingData` when the trigger declares
 * `sdkBinding: true`, else the blob as a Buffer; plus `BlobTrigger`, `Uri`, `Properties`, `Metadata` and
 * the path's `name` / `version`). Like `source: 'EventGrid'`, blobs present at start do not fire.
 * A failing invocation is retried on the next polls, 5 times at most (the runtime's `maxDequeueCount`).
 */
import type { ModelBlob, ModelRepository } from '../lib/rollout/model-repository';
import { blobBindingData } from '../lib/rollout/blob-reference';
import { parseModelBlobPath } from '../lib/rollout/model-path';
import type { FunctionInfo, LocalHost } from './host';
import { resolveAppSettings } from './invoke';
import { DeferredBinding } from './rpc';

/** Invocations of one blob version before it is given up (the runtime then writes it to the poison queue). */
export const MAX_DEQUEUE_COUNT = 5;

/** Options of {@link ModelFeeder.start}. */
export interface ModelFeederOptions {
  readonly host: LocalHost;
  readonly repository: ModelRepository;
  /** Poll period, ms. Default 1000. */
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
  /** Settings for `%NAME%` in the trigger path. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** Feeds the blob trigger from the models container. */
export class ModelFeeder {
  private readonly seen = new Map<string, string>();
  private readonly pending = new Map<string, string>();
  private readonly attempts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<number> | undefined;
  private stopped = false;
  private down = false;

  private constructor(
    private readonly fn: FunctionInfo,
    private readonly opts: ModelFeederOptions,
  ) {}

  /**
   * Finds the blob-trigger function, takes a snapshot of the container (existing blobs never fire) and
   * starts polling. Returns undefined (and logs why) when the app registers no blob trigger.
   */
  static async start(opts: ModelFeederOptions): Promise<ModelFeeder | undefined> {
    const log = opts.log ?? (() => undefined);
    const fn = opts.host.functions.find((f) => f.triggerType.toLowerCase() === 'blobtrigger');
    if (fn === undefined) return undefined;
    const path = resolveAppSettings(String(fn.trigger['path'] ?? ''), opts.env ?? process.env);
    if (!path.startsWith(`${opts.repository.container}/`))
      log(`blob trigger ${fn.name} watches "${path}", not the models container "${opts.repository.container}"`);
    const feeder = new ModelFeeder(fn, opts);
    try {
      for (const b of await opts.repository.list()) feeder.seen.set(b.blobPath, b.etag);
    } catch (err) {
      log(`models container unreachable (${(err as Error).message}); the blob trigger fires once it is`);
      feeder.down = true;
    }
    feeder.schedule();
    return feeder;
  }

  /** Where uploads are watched. */
  get description(): string {
    return this.opts.repository.description;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  /** One poll: invokes the trigger for every new or changed model blob. Resolves with the invocations made. */
  poll(): Promise<number> {
    this.polling ??= this.pass().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pass(): Promise<number> {
    const log = this.opts.log ?? (() => undefined);
    let blobs: ModelBlob[];
    try {
      blobs = await this.opts.repository.list();
      if (this.down) log('models container reachable again');
      this.down = false;
    } catch (err) {
      if (!this.down) log(`models container unreachable (${(err as Error).message}); retrying`);
      this.down = true;
      return 0;
    }
    let fired = 0;
    for (const b of blobs) {
      if (this.stopped) break;
      if (this.seen.get(b.blobPath) === b.etag) continue;
      // a local file may still be being written: fire once it is unchanged across two polls
      if (b.uri.startsWith('file:') && this.pending.get(b.blobPath) !== b.etag) {
        this.pending.set(b.blobPath, b.etag);
        continue;
      }
      this.pending.delete(b.blobPath);
      fired++;
      if (await this.fire(b)) continue;
      const key = `${b.blobPath}@${b.etag}`;
      const n = (this.attempts.get(key) ?? 0) + 1;
      this.attempts.set(key, n);
      if (n >= MAX_DEQUEUE_COUNT) {
        log(`blob ${b.blobPath} failed ${n} times; given up (the runtime would move it to webjobs-blobtrigger-poison)`);
        this.seen.set(b.blobPath, b.etag);
        this.attempts.delete(key);
      }
    }
    return fired;
  }

  /** Whether the trigger uses deferred binding (`sdkBinding: true`): it then gets a reference, not the content. */
  private get deferred(): boolean {
    const props = this.fn.trigger['properties'] as { supportsDeferredBinding?: unknown } | undefined;
    return String(props?.supportsDeferredBinding).toLowerCase() === 'true';
  }

  /** Invokes the trigger for one blob; true when done (whatever the outcome), false to retry. */
  private async fire(b: ModelBlob): Promise<boolean> {
    const container = this.opts.repository.container;
    const rest = b.blobPath.slice(container.length + 1);
    const [name = '', file = ''] = rest.split('/');
    const version = file.replace(/\.onnx$/, '');
    let value: unknown;
    if (this.deferred) {
      // as the runtime does with sdkBinding: a reference to the blob (the function reads it, with a cap)
      value = new DeferredBinding(blobBindingData(String(this.fn.trigger['connection'] ?? ''), container, rest));
    } else {
      let bytes: Uint8Array = new Uint8Array(0);
      try {
        bytes = (
          await this.opts.repository.readModel(parseModelBlobPath(b.blobPath, container), Number.MAX_SAFE_INTEGER)
        ).bytes;
      } catch {
        /* an invalid name: the handler rejects it on its path alone */
      }
      value = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
    }
    try {
      await this.opts.host.invoke(this.fn.name, value, {
        BlobTrigger: b.blobPath,
        Uri: b.uri,
        Properties: { ContentLength: b.size, ETag: b.etag },
        Metadata: b.metadata,
        name,
        version,
      });
      this.seen.set(b.blobPath, b.etag);
      return true;
    } catch (err) {
      (this.opts.log ?? (() => undefined))(
        `blob trigger ${this.fn.name} failed for ${b.blobPath}: ${(err as Error).message}; retrying`,
      );
      return false;
    }
  }

  /** Stops polling and waits for a poll under way. */
  async stop(): Promise<void> {
    this.stopped = true;
    clearTimeout(this.timer);
    await this.polling;
  }
}
