/**
 * The app thread's side of the local host's HTTP front (`./http-front-worker`): starts the front's thread
 * and answers the invocations it sends, as the Node worker answers the Functions host.
 * @module
 */
import * as path from 'node:path';
import { Worker } from 'node:worker_threads';
import type { RpcHttpData, RpcLogLevel } from './core-types';
import { runExtraRoute, type AppMessage, type FrontMessage, type FrontSettings } from './front-protocol';
import type { ExtraRoutes } from './http-server';
import type { DecodedHttpResponse } from './rpc';

/** What the app thread does for the front. */
export interface FrontHandlers {
  /** Runs the named http-triggered function; resolves to its http response (`undefined` if none). */
  invoke(name: string, http: RpcHttpData): Promise<DecodedHttpResponse | undefined>;
  extraRoutes?: ExtraRoutes;
  log(level: RpcLogLevel, message: string): void;
}

/** The HTTP front's thread, seen from the app thread. */
export class HttpFront {
  readonly #worker: Worker;
  readonly #host: string;
  readonly #port: number;
  #closing: Promise<void> | undefined;

  private constructor(worker: Worker, host: string, port: number) {
    this.#worker = worker;
    this.#host = host;
    this.#port = port;
  }

  /** Starts the front's thread and waits until it listens. */
  static start(settings: Omit<FrontSettings, 'extraRoutes'>, handlers: FrontHandlers): Promise<HttpFront> {
    const worker = new Worker(path.join(__dirname, 'http-front-worker.js'), {
      workerData: { ...settings, extraRoutes: handlers.extraRoutes !== undefined } satisfies FrontSettings,
    });
    const reply = (m: AppMessage): void => worker.postMessage(m);
    return new Promise((resolve, reject) => {
      const onExit = (code: number): void => reject(new Error(`the HTTP front's thread exited (${code})`));
      worker.once('error', reject);
      worker.once('exit', onExit);
      worker.on('message', (m: FrontMessage) => {
        switch (m.t) {
          case 'listening':
            worker.off('error', reject);
            worker.off('exit', onExit);
            worker.on('error', (err) => handlers.log('error', `HTTP front failed: ${err.stack ?? err.message}`));
            resolve(new HttpFront(worker, settings.host, m.port));
            return;
          case 'failed':
            void worker.terminate();
            reject(new Error(m.message));
            return;
          case 'invoke':
            handlers.invoke(m.name, m.http).then(
              (response) => reply({ t: 'response', id: m.id, response }),
              (err: unknown) =>
                reply({
                  t: 'error',
                  id: m.id,
                  message: err instanceof Error ? (err.stack ?? err.message) : String(err),
                }),
            );
            return;
          case 'extra':
            runExtraRoute(handlers.extraRoutes ?? (() => false), m).then(
              (response) => reply({ t: 'extra', id: m.id, response }),
              (err: unknown) => {
                handlers.log('error', `extra route failed: ${err instanceof Error ? err.stack : String(err)}`);
                const body = Buffer.from('{"status":500,"title":"Internal Server Error"}');
                reply({ t: 'extra', id: m.id, response: { status: 500, headers: {}, body } });
              },
            );
            return;
          case 'log':
            handlers.log(m.level, m.message);
            return;
          case 'closed':
            return;
        }
      });
    });
  }

  get port(): number {
    return this.#port;
  }

  /** Origin, e.g. `http://127.0.0.1:7071` (IPv6 hosts bracketed). */
  get url(): string {
    const host = this.#host.includes(':') ? `[${this.#host}]` : this.#host;
    return `http://${host}:${this.#port}`;
  }

  /** Stops accepting, lets in-flight requests finish (up to `timeoutMs`), then ends the thread. */
  close(timeoutMs: number): Promise<void> {
    this.#closing ??= new Promise<void>((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        void this.#worker.terminate().then(() => resolve());
      };
      const timer = setTimeout(done, timeoutMs + 1000);
      this.#worker.on('message', (m: FrontMessage) => {
        if (m.t === 'closed') done();
      });
      this.#worker.postMessage({ t: 'close', timeoutMs } satisfies AppMessage);
    });
    return this.#closing;
  }
}
