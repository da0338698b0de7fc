import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { healthLive, healthReady } from '../lib/contracts/score';
import { route } from '../lib/http/route';

/** Seconds a load balancer should wait before asking again when not ready. */
const NOT_READY_RETRY_AFTER_SEC = 5;

/** GET /api/health/live: the process is up. */
app.http(
  healthLive.name,
  route(healthLive, () => Promise.resolve({ body: { status: 'live' } })),
);

/**
 * GET /api/health/ready: `{ status, model: { name, version } }` from the last sample inference the engine
 * already ran (in the background, and at every swap): it runs nothing and never waits behind scoring
 * traffic. 503 + `Retry-After` when not ready. Reasons and details: `GET /api/models/health` (admin).
 */
app.http(
  healthReady.name,
  route(
    healthReady,
    async (_input, { engine }) => {
      const r = engine.ready();
      return r.status === 'ready'
        ? { body: r }
        : { status: 503, body: r, headers: { 'retry-after': String(NOT_READY_RETRY_AFTER_SEC) } };
    },
    { uses: subsystems('engine') },
  ),
);
