/**
 * Variant (d): this service, served over HTTP by the local Functions host exactly as `npm start` does
 * (the real `@azure/functions` library, the function adapters, the shared engine). Settings come from
 * the environment the orchestrator sets (MODEL_DIR, INFERENCE_*, BATCH_*, REDIS_URL, ...).
 */
import * as path from 'node:path';
import { appHostDoor } from '../../local/app-host-door';
import { LocalHost } from '../../local/host';
import { announce, statsRoute } from './common';

const MODULES = ['hooks', 'health', 'score', 'score-batch'].map((m) =>
  path.join(__dirname, '..', '..', 'functions', `${m}.js`),
);

async function main(): Promise<void> {
  const host = await LocalHost.create({
    port: 0,
    appModules: MODULES,
    log: () => undefined,
    extraRoutes: statsRoute,
    door: process.env['BENCH_NO_DOOR'] === '1' ? undefined : await appHostDoor(),
  });
  announce(host.port);
  process.on('SIGTERM', () => void host.dispose().finally(() => process.exit(0)));
}

void main();
