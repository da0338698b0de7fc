import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { oipServerLive, oipServerMetadata, oipServerReady } from '../lib/contracts/oip';
import { oipRoute, readyReply } from '../lib/oip/oip-http';

const oip = subsystems('oip');

/** GET /api/v2: Open Inference Protocol server metadata `{ name, version, extensions }`. */
app.http(
  oipServerMetadata.name,
  oipRoute(oipServerMetadata, async (_input, { oip }) => ({ body: oip.serverMetadata() }), { uses: oip }),
);

/** GET /api/v2/health/live: 200 `{ live: true }` while the process runs. */
app.http(
  oipServerLive.name,
  oipRoute(oipServerLive, () => Promise.resolve({ body: { live: true } })),
);

/** GET /api/v2/health/ready: 200 `{ ready: true }` after a sample inference through the active model; else 400 `{ error }`. */
app.http(
  oipServerReady.name,
  oipRoute(oipServerReady, async (_input, { oip }) => readyReply(await oip.serverReady(), {}), { uses: oip }),
);
