/**
 * The refusal-cost scenario's server: this service through the local host, held full so that every
 * `POST /api/score` is refused. `REFUSE_AT=door`: the host's door holds its only slot (limit 1), so the
 * host answers before the body is read. `REFUSE_AT=handler`: no door; the engine's gate holds its only slot
 * (`ADMISSION_MAX_INFLIGHT=1`), so the refusal happens inside the function handler after the host has read
 * the body and `@azure/functions` has built the request, as it did before the door existed.
 */
import * as path from 'node:path';
import { sharedEngine } from '../../lib/app';
import { LocalHost } from '../../local/host';
import { HostDoor } from '../../local/host-door';
import { announce, statsRoute } from './common';

const MODULES = ['hooks', 'score'].map((m) => path.join(__dirname, '..', '..', 'functions', `${m}.js`));

async function main(): Promise<void> {
  const atDoor = process.env['REFUSE_AT'] === 'door';
  const door = atDoor ? new HostDoor({ maxLimit: 1, minLimit: 1, holdMs: 0 }) : undefined;
  const host = await LocalHost.create({
    port: 0,
    appModules: MODULES,
    log: () => undefined,
    extraRoutes: statsRoute,
    door,
  });
  const engine = await sharedEngine();
  if (door !== undefined)
    door.enter('POST'); // the door's only slot, never left
  else void engine.admit(() => new Promise<never>(() => undefined)); // the engine gate's only slot, never released
  announce(host.port);
  process.on('SIGTERM', () => process.exit(0));
}

void main();
