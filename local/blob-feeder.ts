/**
 * Plays the Functions runtime's blob triggers for `npm start`, as Event Grid does in Azure: polls the models
 * container (the local `models/` folder by default, or Azurite with `AzureWebJobsStorage=UseDevelopmentStorage=true`)
 * and, for each new or changed blob that matches a registered blob trigger's declared path (e.g. `{name}/{version}.onnx`
 * for models, `rulesets/{name}/{version}.json` for rulesets), invokes that function exactly as the runtime would (a
 * reference to the blob as `modelBindingData` when the trigger declares `sdkBinding: true`, else the blob's content
 * as a Buffer; plus `BlobTrigger`, `Uri`, `Properties`, `Metadata` and the path's named parts). Like
 * `source: 'EventGrid'`, blobs present at start do not fire. A failing invocation is retried on the next polls, 5
 * times at most (the runtime's `maxDequeueCount`). Triggers on another container are reported, not fed.
 */
import type { ModelBlob, ModelRepository } from '../lib/model-rollout/model-repository';
import { blobBindingData } from '../lib/model-rollout/blob-reference';
import type { FunctionInfo, LocalHost } from './host';
import { resolveAppSettings } from './invoke';
import { DeferredBinding } from './rpc';

/** Invocations of one blob version before it is given up (the runtime then writes it to the poison queue). */
export const MAX_DEQUEUE_COUNT = 5;

/** Largest blob content handed to a trigger that takes content (not a reference), bytes. */
export const MAX_CONTENT_BYTES = 256 * 1024 * 1024;

/** Options of {@link BlobFeeder.start}. */
export interface BlobFeederOptions {
  readonly host: LocalHost;
  readonly repository: ModelRepository;
  /** Poll period, ms. Default 1000. */
  readonly intervalMs?: number;
  readonly log?: (line: string) => void;
  /** Settings for `%NAME%` in the trigger paths. Default `process.env`. */
  readonly env?: NodeJS.ProcessEnv;
}

/** One blob trigger and the blobs it matches: its path as a pattern with named parts. */
interface Watch {
  readonly fn: FunctionInfo;
  /** `{container}/…` with `{name}` parts, resolved. */
  readonly path: string;
  readonly pattern: RegExp;
  readonly names: readonly string[];
  /** The extension its path ends with (what the container is listed for), e.g. `.onnx`. */
  readonly suffix: string;
}

/** A trigger path (`models/rulesets/{name}/{version}.json`) as a whole-path pattern with its part names. */
export function triggerPattern(path: string): { pattern: RegExp; names: string[] } {
  const names: string[] = [];
  const source = path
    .split(/(\{[A-Za-z_][A-Za-z0-9_]*\})/)
    .map((part) => {
      const m = /^\{([A-Za-z_][A-Za-z0-9_]*)\}$/.exec(part);
      if (m === null) return part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      names.push(m[1] as string);
      return '([^/]+)';
    })
    .join('');
  return { pattern: new RegExp(`^${source}$`), names };
}

/** Feeds every blob trigger from the models container. */
export class BlobFeeder {
  private readonly seen = new Map<string, string>();
  private readonly pending = new Map<string, string>();
  private readonly attempts = new Map<string, number>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<number> | undefined;
  private stopped = false;
  private down = false;

  private constructor(
    private readonly watches: readonly Watch[],
    private readonly opts: BlobFeederOptions,
  ) {}

  /**
   * Finds the blob-trigger functions, takes a snapshot of the container (existing blobs never fire) and starts
   * polling. Returns undefined when the app registers no blob trigger on the container.
   */
  static async start(opts: BlobFeederOptions): Promise<BlobFeeder | undefined> {
    const log = opts.log ?? (() => undefined);
    const container = opts.repository.container;
    const watches: Watch[] = [];
    for (const fn of opts.host.functions.filter((f) => f.triggerType.toLowerCase() === 'blobtrigger')) {
      const path = resolveAppSettings(String(fn.trigger['path'] ?? ''), opts.env ?? process.env);
      if (!path.startsWith(`${container}/`)) {
        log(`blob trigger ${fn.name} watches "${path}", not the models container "${container}": not fed`);
        continue;
      }
      const dot = path.lastIndexOf('.');
      const suffix = dot > path.lastIndexOf('}') ? path.slice(dot) : '';
      watches.push({ fn, path, ...triggerPattern(path), suffix });
    }
    if (watches.length === 0) return undefined;
    const feeder = new BlobFeeder(watches, opts);
    try {
      for (const [w, b] of await feeder.matches()) feeder.seen.set(`${w.fn.name}|${b.blobPath}`, b.etag);
    } catch (err) {
      log(`models container unreachable (${(err as Error).message}); the blob triggers fire once it is`);
      feeder.down = true;
    }
    feeder.schedule();
    return feeder;
  }

  /** Where uploads are watched, and which paths. */
  get description(): string {
    return `${this.opts.repository.description}: ${this.watches.map((w) => `${w.path} -> ${w.fn.name}`).join(', ')}`;
  }

  /** The blob paths watched (resolved trigger paths). */
  get paths(): readonly string[] {
    return this.watches.map((w) => w.path);
  }

  /** Every (trigger, blob) pair the container holds now. */
  private async matches(): Promise<[Watch, ModelBlob][]> {
    const out: [Watch, ModelBlob][] = [];
    const bySuffix = new Map<string, ModelBlob[]>();
    for (const w of this.watches) {
      let blobs = bySuffix.get(w.suffix);
      if (blobs === undefined) bySuffix.set(w.suffix, (blobs = await this.opts.repository.list(w.suffix)));
      for (const b of blobs) if (w.pattern.test(b.blobPath)) out.push([w, b]);
    }
    return out;
  }

  private schedule(): void {
    if (this.stopped) return;
    this.timer = setTimeout(() => void this.poll().finally(() => this.schedule()), this.opts.intervalMs ?? 1000);
    this.timer.unref();
  }

  /** One poll: invokes the triggers for every new or changed matching blob. Resolves with the invocations made. */
  poll(): Promise<number> {
    this.polling ??= this.pass().finally(() => (this.polling = undefined));
    return this.polling;
  }

  private async pass(): Promise<number> {
    const log = this.opts.log ?? (() => undefined);
    let found: [Watch, ModelBlob][];
    try {
      found = await this.matches();
      if (this.down) log('models container reachable again');
      this.down = false;
    } catch (err) {
      if (!this.down) log(`models container unreachable (${(err as Error).message}); retrying`);
      this.down = true;
      return 0;
    }
    let fired = 0;
    for (const [w, b] of found) {
      if (this.stopped) break;
      const key = `${w.fn.name}|${b.blobPath}`;
      if (this.seen.get(key) === b.etag) continue;
      // a local file may still be being written: fire once it is unchanged across two polls
      if (b.uri.startsWith('file:') && this.pending.get(key) !== b.etag) {
        this.pending.set(key, b.etag);
        continue;
      }
      this.pending.delete(key);
      fired++;
      if (await this.fire(w, b)) continue;
      const attempt = `${key}@${b.etag}`;
      const n = (this.attempts.get(attempt) ?? 0) + 1;
      this.attempts.set(attempt, n);
      if (n >= MAX_DEQUEUE_COUNT) {
        log(`blob ${b.blobPath} failed ${n} times; given up (the runtime would move it to webjobs-blobtrigger-poison)`);
        this.seen.set(key, b.etag);
        this.attempts.delete(attempt);
      }
    }
    return fired;
  }

  /** Whether the trigger uses deferred binding (`sdkBinding: true`): it then gets a reference, not the content. */
  private static deferred(fn: FunctionInfo): boolean {
    const props = fn.trigger['properties'] as { supportsDeferredBinding?: unknown } | undefined;
    return String(props?.supportsDeferredBinding).toLowerCase() === 'true';
  }

  /** Invokes one trigger for one blob; true when done (whatever the outcome), false to retry. */
  private async fire(w: Watch, b: ModelBlob): Promise<boolean> {
    const container = this.opts.repository.container;
    const rest = b.blobPath.slice(container.length + 1);
    const parts = w.pattern.exec(b.blobPath) ?? [];
    const named = Object.fromEntries(w.names.map((n, i) => [n, parts[i + 1] ?? '']));
    const log = this.opts.log ?? (() => undefined);
    let value: unknown;
    if (BlobFeeder.deferred(w.fn)) {
      // as the runtime does with sdkBinding: a reference to the blob (the function reads it, with a cap)
      value = new DeferredBinding(blobBindingData(String(w.fn.trigger['connection'] ?? ''), container, rest));
    } else {
      try {
        value = await this.opts.repository.readBlob(b.blobPath, MAX_CONTENT_BYTES);
      } catch (err) {
        log(`blob ${b.blobPath} could not be read (${(err as Error).message}); retrying`);
        return false;
      }
    }
    try {
      await this.opts.host.invoke(w.fn.name, value, {
        BlobTrigger: b.blobPath,
        Uri: b.uri,
        Properties: { ContentLength: b.size, ETag: b.etag },
        Metadata: b.metadata,
        ...named,
      });
      this.seen.set(`${w.fn.name}|${b.blobPath}`, b.etag);
      return true;
    } catch (err) {
      log(`blob trigger ${w.fn.name} failed for ${b.blobPath}: ${(err as Error).message}; retrying`);
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
