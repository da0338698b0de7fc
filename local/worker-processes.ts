/**
 * `FUNCTIONS_WORKER_PROCESS_COUNT` as the Functions host runs it: N language worker processes per instance, each
 * with its own module state, HTTP invocations handed round-robin, the host's throttles applied once for all (they
 * live in the HTTP front, which is the host's). Here the host's own process runs the app as worker 1 and forks N − 1
 * more (`./worker-process`); each loads the same function modules through the same core shim and answers
 * invocations over the IPC channel (advanced serialization: bodies travel as bytes).
 * @module
 */
import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import type { RpcHttpData, RpcLogLevel } from './core-types';
import type { ForwardedSend } from './forwarding-bus';
import type { DecodedHttpResponse } from './rpc';

/** What the host asks a worker process. */
export type ToWorker =
  | {
      readonly t: 'init';
      readonly appModules: readonly string[];
      readonly functionAppDirectory: string;
      readonly invocationLog: boolean;
      readonly verbose: boolean;
    }
  | { readonly t: 'invoke'; readonly id: number; readonly name: string; readonly http: RpcHttpData }
  | { readonly t: 'stop' };

/** What a worker process answers. */
export type FromWorker =
  | { readonly t: 'ready' }
  | { readonly t: 'failed'; readonly message: string }
  | { readonly t: 'response'; readonly id: number; readonly response: DecodedHttpResponse | undefined }
  | { readonly t: 'error'; readonly id: number; readonly message: string }
  | { readonly t: 'log'; readonly level: RpcLogLevel; readonly message: string }
  /** A message the app sent to the embedded bus (./forwarding-bus), for the host's bus. */
  | ForwardedSend;

/** Where the host puts what a worker process sends to the embedded bus. */
export type BusSink = (m: ForwardedSend) => void;

/** Invokes an HTTP-triggered function by name. */
export type HttpInvoker = (name: string, http: RpcHttpData) => Promise<DecodedHttpResponse | undefined>;

/** The allowed range of `FUNCTIONS_WORKER_PROCESS_COUNT` (the platform's). */
export const MAX_WORKER_PROCESSES = 10;

/**
 * The worker process count a setting asks for: 1 when unset; an integer from 1 to {@link MAX_WORKER_PROCESSES}.
 * @throws Error naming the setting for anything else (the host does not start).
 */
export function workerProcessCount(value: string | undefined): number {
  if (value === undefined || value.trim() === '') return 1;
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > MAX_WORKER_PROCESSES)
    throw new Error(
      `FUNCTIONS_WORKER_PROCESS_COUNT must be a whole number from 1 to ${MAX_WORKER_PROCESSES}: "${value}"`,
    );
  return n;
}

/** Puts a worker process's bus message on the host's bus; a refusal (a full durable queue) is logged, never thrown. */
function forwardToBus(m: ForwardedSend, sink: BusSink | undefined, fail: (e: string) => void): void {
  if (sink === undefined) return fail(`a message for ${m.name} was dropped: this host has no embedded bus`);
  try {
    sink(m);
  } catch (err) {
    fail(
      `a message for ${m.name} was refused by the embedded bus: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
}

/** One forked worker process, seen from the host. */
class WorkerProcess {
  #next = 0;
  readonly #pending = new Map<number, { resolve(r: DecodedHttpResponse | undefined): void; reject(e: Error): void }>();
  #exited = false;

  private constructor(
    readonly index: number,
    private readonly child: ChildProcess,
  ) {
    child.on('message', (m: FromWorker) => {
      if (m.t === 'response') this.#settle(m.id)?.resolve(m.response);
      else if (m.t === 'error') this.#settle(m.id)?.reject(new Error(m.message));
    });
    child.once('exit', () => {
      this.#exited = true;
      for (const p of this.#pending.values()) p.reject(new Error(`worker process ${index} exited`));
      this.#pending.clear();
    });
  }

  #settle(id: number) {
    const p = this.#pending.get(id);
    this.#pending.delete(id);
    return p;
  }

  /** Forks worker `index`, loads the app in it and waits (bounded) for its `ready`. */
  static async start(
    index: number,
    init: Extract<ToWorker, { t: 'init' }>,
    log: (level: RpcLogLevel, message: string) => void,
    readyMs: number,
    busSink?: BusSink,
  ): Promise<WorkerProcess> {
    const child = fork(path.join(__dirname, 'worker-process.js'), [], {
      serialization: 'advanced',
      env: { ...process.env, FUNCTIONS_WORKER_PROCESS_COUNT: '1', LOCAL_WORKER_PROCESS_INDEX: String(index) },
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    child.on('message', (m: FromWorker) => {
      if (m.t === 'log') log(m.level, `[worker ${index}] ${m.message}`);
      else if (m.t === 'bus') forwardToBus(m, busSink, (e) => log('error', `[worker ${index}] ${e}`));
    });
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => {
        child.kill('SIGKILL');
        reject(new Error(`worker process ${index} did not load the app within ${readyMs} ms`));
      }, readyMs);
      const onExit = (code: number | null): void => {
        clearTimeout(timer);
        reject(new Error(`worker process ${index} exited (${code}) before it was ready`));
      };
      child.once('exit', onExit);
      child.on('message', (m: FromWorker) => {
        if (m.t !== 'ready' && m.t !== 'failed') return;
        clearTimeout(timer);
        child.off('exit', onExit);
        if (m.t === 'ready') resolve();
        else reject(new Error(`worker process ${index}: ${m.message}`));
      });
      child.send(init);
    });
    return new WorkerProcess(index, child);
  }

  invoke(name: string, http: RpcHttpData): Promise<DecodedHttpResponse | undefined> {
    if (this.#exited) return Promise.reject(new Error(`worker process ${this.index} exited`));
    const id = this.#next++;
    return new Promise((resolve, reject) => {
      this.#pending.set(id, { resolve, reject });
      this.child.send({ t: 'invoke', id, name, http } satisfies ToWorker);
    });
  }

  get alive(): boolean {
    return !this.#exited;
  }

  /** Asks the process to finish its invocations and run `appTerminate`; kills it after `timeoutMs`. */
  stop(timeoutMs: number): Promise<void> {
    if (this.#exited) return Promise.resolve();
    return new Promise((resolve) => {
      const timer = setTimeout(() => this.child.kill('SIGKILL'), timeoutMs);
      this.child.once('exit', () => {
        clearTimeout(timer);
        resolve();
      });
      this.child.send({ t: 'stop' } satisfies ToWorker);
    });
  }
}

/** The worker processes beyond the host's own, and the round-robin over all of them. */
export class WorkerPool {
  #turn = 0;

  private constructor(
    private readonly own: HttpInvoker,
    private readonly others: readonly WorkerProcess[],
  ) {}

  /** Forks `count − 1` worker processes (none for 1); `own` invokes in the host's own process (worker 1). */
  static async start(
    count: number,
    own: HttpInvoker,
    init: Extract<ToWorker, { t: 'init' }>,
    log: (level: RpcLogLevel, message: string) => void,
    readyMs = 120_000,
    busSink?: BusSink,
  ): Promise<WorkerPool> {
    const started = await Promise.allSettled(
      Array.from({ length: count - 1 }, (_, i) => WorkerProcess.start(i + 2, init, log, readyMs, busSink)),
    );
    const failed = started.find((s): s is PromiseRejectedResult => s.status === 'rejected');
    const ok = started.flatMap((s) => (s.status === 'fulfilled' ? [s.value] : []));
    if (failed !== undefined) {
      await Promise.all(ok.map((w) => w.stop(5_000)));
      throw failed.reason;
    }
    return new WorkerPool(own, ok);
  }

  /** How many processes serve (the host's own included). */
  get size(): number {
    return 1 + this.others.length;
  }

  /** The next process in turn among those alive (a process that died is skipped, as the host restarts it). */
  invoke(name: string, http: RpcHttpData): Promise<DecodedHttpResponse | undefined> {
    for (let tries = 0; tries < this.size; tries++) {
      const k = this.#turn++ % this.size;
      if (k === 0) return this.own(name, http);
      const w = this.others[k - 1] as WorkerProcess;
      if (w.alive) return w.invoke(name, http);
    }
    return this.own(name, http);
  }

  /** Stops every forked process (its in-flight invocations finish first, up to `timeoutMs`). */
  async stop(timeoutMs: number): Promise<void> {
    await Promise.all(this.others.map((w) => w.stop(timeoutMs)));
  }
}
