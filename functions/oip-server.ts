import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { using } from '../lib/http/route';
import { jsonResponse } from '../lib/http/http-io';
import { readyResponse, withOipErrors } from '../lib/oip/oip-http';

const oip = subsystems('oip');

/** GET /api/v2: Open Inference Protocol server metadata `{ name, version, extensions }`. */
app.http('oipServerMetadata', {
  route: 'v2',
  methods: ['GET'],
  authLevel: 'function',
  handler: withOipErrors(using(oip, async ({ oip }) => jsonResponse(200, oip.serverMetadata()))),
});

/** GET /api/v2/health/live: 200 `{ live: true }` while the process runs. */
app.http('oipServerLive', {
  route: 'v2/health/live',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: () => Promise.resolve(jsonResponse(200, { live: true })),
});

/** GET /api/v2/health/ready: 200 `{ ready: true }` after a sample inference through the active model; else 400 `{ error }`. */
app.http('oipServerReady', {
  route: 'v2/health/ready',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: withOipErrors(using(oip, async ({ oip }) => readyResponse(await oip.serverReady(), {}))),
});
