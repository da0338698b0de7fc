/**
 * Variant (d): this service, served over HTTP by the local Functions host exactly as `npm start` does
 * (the real `@azure/functions` library, the function adapters, the shared engine). Settings come from
 * the environment the orchestrator sets (MODEL_DIR, INFERENCE_*, BATCH_*, REDIS_URL, ...).
 */
import type * as http from 'node:http';
import * as path from 'node:path';
import { sharedEngine } from '../../lib/app';
import { appHostDoor } from '../../local/app-host-door';
import { LocalHost } from '../../local/host';
import { announce, statsRoute } from './common';

const MODULES = ['hooks', 'health', 'score', 'score-batch'].map((m) =>
  path.join(__dirname, '..', '..', 'functions', `${m}.js`),
);

async function main(): Promise<void> {
  const started: { host?: LocalHost } = {};
  /** `GET /__bench/admission`: the door's and the engine gate's limits and counters, and the door's hold (ms). */
  const admissionRoute = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> => {
    if (!(req.url ?? '').startsWith('/__bench/admission')) return statsRoute(req, res);
    const stats = started.host?.doorStats;
    const body = {
      door: stats === undefined ? null : { ...stats, hold_ms: door?.holdMs },
      engine: (await sharedEngine()).admissionStats ?? null,
    };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify(body));
    return true;
  };
  // BENCH_NO_DOOR=1: without the host's door (refusals only inside the handler), for comparison
  const door = process.env['BENCH_NO_DOOR'] === '1' ? undefined : await appHostDoor();
  const host = await LocalHost.create({
    port: 0,
    appModules: MODULES,
    log: () => undefined,
    extraRoutes: admissionRoute,
    door,
  });
  started.host = host;
  announce(host.port);
  process.on('SIGTERM', () => void host.dispose().finally(() => process.exit(0)));
}

void main();
