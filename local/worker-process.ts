/**
 * A forked language worker process of the local host (`FUNCTIONS_WORKER_PROCESS_COUNT` > 1, `./worker-processes`):
 * loads the app through the core shim as the host's own process does, answers the HTTP invocations the host sends
 * over IPC, and on `stop` lets them finish, runs `appTerminate` and exits. Its logs go to the host over IPC; what
 * the app writes to stdout and stderr goes to the host's.
 * @module
 */
import './local-settings'; // local.settings.json Values, as in the host's own process
import '../lib/telemetry/preload';
import { configureSharedEngine } from '../lib/app';
import { loadApp } from './app-loader';
import { installCoreShim } from './core-shim';
import type { RpcLogLevel } from './core-types';
import { ForwardingBus } from './forwarding-bus';
import { runAppHooks } from './invoke';
import type { FromWorker, ToWorker } from './worker-processes';

const send = (m: FromWorker): void => void process.send?.(m);

async function start(init: Extract<ToWorker, { t: 'init' }>): Promise<void> {
  const registry = installCoreShim();
  const log = (level: RpcLogLevel, message: string): void => {
    if (!init.verbose && (level === 'trace' || level === 'debug')) return;
    send({ t: 'log', level, message });
  };
  registry.logSink = (e) => log(e.level, e.functionName ? `${e.functionName}: ${e.message}` : e.message);
  // the embedded bus lives in the host's process: what the app sends there (review cases) is forwarded to it
  configureSharedEngine({ bus: new ForwardingBus(send) });
  const app = await loadApp(registry, init, log);
  const inflight = new Set<Promise<unknown>>();
  process.on('message', (m: ToWorker) => {
    if (m.t === 'invoke') {
      const p = app.invokeHttp(m.name, m.http).then(
        (response) => send({ t: 'response', id: m.id, response }),
        (err: unknown) =>
          send({ t: 'error', id: m.id, message: err instanceof Error ? (err.stack ?? err.message) : String(err) }),
      );
      inflight.add(p);
      void p.finally(() => inflight.delete(p));
    } else if (m.t === 'stop') {
      void Promise.allSettled([...inflight])
        .then(() => runAppHooks(registry, 'appTerminate', init.functionAppDirectory))
        .finally(() => process.exit(0));
    }
  });
  send({ t: 'ready' });
}

process.once('message', (m: ToWorker) => {
  if (m.t !== 'init') return;
  start(m).catch((err: unknown) => {
    send({ t: 'failed', message: err instanceof Error ? err.message : String(err) });
    process.exit(1);
  });
});
// a host that died leaves its workers no one to answer
process.on('disconnect', () => process.exit(0));
// the host's stop arrives as a message; a signal to the process group (Ctrl+C) must not cut invocations short
process.on('SIGINT', () => undefined);
process.on('SIGTERM', () => undefined);
