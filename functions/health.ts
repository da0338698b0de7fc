import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { AppError } from '../lib/errors/errors';
import { jsonResponse, withProblems } from '../lib/http/http-io';

/** GET /api/health/live: the process is up. */
app.http('healthLive', {
  route: 'health/live',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: () => Promise.resolve(jsonResponse(200, { status: 'live' })),
});

/** GET /api/health/ready: a sample inference through the active model. */
app.http('healthReady', {
  route: 'health/ready',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: withProblems(async () => {
    const r = await (await sharedEngine()).readiness();
    if (!r.ready) throw new AppError('model_not_ready', r.reason, { retryAfterSec: 5 });
    return jsonResponse(200, { status: 'ready', ...r });
  }),
});
