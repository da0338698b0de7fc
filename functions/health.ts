import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { jsonResponse, withProblems } from '../lib/http/http-io';

/** Seconds a load balancer should wait before asking again when not ready. */
const NOT_READY_RETRY_AFTER_SEC = 5;

/** GET /api/health/live: the process is up. */
app.http('healthLive', {
  route: 'health/live',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: () => Promise.resolve(jsonResponse(200, { status: 'live' })),
});

/**
 * GET /api/health/ready: `{ status, model: { name, version } }` from the last sample inference the engine
 * already ran (in the background, and at every swap): it runs nothing and never waits behind scoring
 * traffic. 503 + `Retry-After` when not ready. Reasons and details: `GET /api/models/health` (admin).
 */
app.http('healthReady', {
  route: 'health/ready',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: withProblems(async () => {
    const r = (await sharedEngine()).ready();
    return r.status === 'ready'
      ? jsonResponse(200, r)
      : jsonResponse(503, r, { 'retry-after': String(NOT_READY_RETRY_AFTER_SEC) });
  }),
});
