/**
 * Variant (d): this service, served over HTTP by the local Functions host exactly as `npm start` does
 * (the real `@azure/functions` library, the function adapters, the shared engine). Settings come from
 * the environment the orchestrator sets (MODEL_DIR, INFERENCE_*, BATCH_*, REDIS_URL, ...).
 */
import type * as http from 'node:http';
import * as path from 'node:path';
import { sharedEngine } from '../../lib/app';
import { appRoot } from '../../lib/config/app-root';
import { hostJsonHttp } from '../../local/host-json';
import { LocalHost } from '../../local/host';
import { announce, statsRoute } from './common';

const MODULES = ['hooks', 'health', 'score', 'score-batch'].map((m) =>
  path.join(__dirname, '..', '..', 'functions', `${m}.js`),
);

async function main(): Promise<void> {
  /** `GET /__bench/admission`: the engine's admission counters (deadline admission and the ceiling). */
  const admissionRoute = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> => {
    if (!(req.url ?? '').startsWith('/__bench/admission')) return statsRoute(req, res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ engine: (await sharedEngine()).admissionStats ?? null }));
    return true;
  };
  const { routePrefix, maxConcurrentRequests, maxOutstandingRequests } = hostJsonHttp(appRoot());
  const host = await LocalHost.create({
    port: 0,
    appModules: MODULES,
    log: () => undefined,
    extraRoutes: admissionRoute,
    routePrefix,
    throttles: { maxConcurrentRequests, maxOutstandingRequests },
  });
  announce(host.port);
  process.on('SIGTERM', () => void host.dispose().finally(() => process.exit(0)));
}

void main();
