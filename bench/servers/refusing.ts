/**
 * The refusal-cost scenario's server: this service through the local host (host.json's throttles), held
 * full so that every valid `POST /api/score` is refused by the engine's admission inside the function handler,
 * where it runs in Azure: `ADMISSION_MAX_INFLIGHT=1` and that one slot is taken for good, so each request
 * pays the front, the invocation, its body's reading and validation (done before admission), and one 503
 * (`overloaded`, `Retry-After`).
 */
import * as path from 'node:path';
import { sharedEngine } from '../../lib/app';
import { appRoot } from '../../lib/config/app-root';
import { LocalHost } from '../../local/host';
import { hostJsonHttp } from '../../local/host-json';
import { announce, statsRoute } from './common';

const MODULES = ['hooks', 'score'].map((m) => path.join(__dirname, '..', '..', 'functions', `${m}.js`));

async function main(): Promise<void> {
  const { routePrefix, maxConcurrentRequests, maxOutstandingRequests } = hostJsonHttp(appRoot());
  const host = await LocalHost.create({
    port: 0,
    appModules: MODULES,
    log: () => undefined,
    extraRoutes: statsRoute,
    routePrefix,
    throttles: { maxConcurrentRequests, maxOutstandingRequests },
  });
  const engine = await sharedEngine();
  void engine.admit(60_000, () => new Promise<never>(() => undefined)); // the ceiling's only slot, never released
  announce(host.port);
  process.on('SIGTERM', () => process.exit(0));
}

void main();
