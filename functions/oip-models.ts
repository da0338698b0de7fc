import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { oipModelInfer, oipModelMetadata, oipModelReady } from '../lib/contracts/oip';
import { DEADLINE_HEADER, resolveDeadlineMs } from '../lib/inference/deadline';
import { oipRoute, readyReply } from '../lib/oip/oip-http';

const oip = subsystems('oip');
const engine = subsystems('engine');

/** GET /api/v2/models/{name}[/versions/{version}]: model metadata (versions, platform, inputs and outputs from the ONNX graph). */
for (const c of oipModelMetadata)
  app.http(
    c.name,
    oipRoute(
      c,
      async (input, { oip }) => ({ body: await oip.modelMetadata(input.param('name') ?? '', input.param('version')) }),
      { uses: oip },
    ),
  );

/** GET /api/v2/models/{name}[/versions/{version}]/ready: 200 `{ name, ready: true }` when loaded here; 400 when not; 404 when unknown. */
for (const c of oipModelReady)
  app.http(
    c.name,
    oipRoute(
      c,
      async (input, { oip }) => {
        const name = input.param('name') ?? '';
        const version = input.param('version');
        const ready = await oip.modelReady(name, version);
        return readyReply(ready, { name, ...(version === undefined ? {} : { version }) });
      },
      { uses: oip },
    ),
  );

/**
 * POST /api/v2/models/{name}[/versions/{version}]/infer: inference (active version, or exactly the one named).
 * As for /api/score: header `x-deadline-ms`, the deadline starts as the invocation reaches the app, the body
 * is read and validated first (400 even under load), then admission judges the valid request.
 */
for (const c of oipModelInfer)
  app.http(
    c.name,
    oipRoute(
      c,
      async (input, { engine }, r) => {
        const arrivedAt = engine.arrival();
        const deadlineMs = resolveDeadlineMs(r.headers.get(DEADLINE_HEADER), engine.config.inference);
        const body = await input.json(engine.config.http.oipBodyLimitBytes);
        const result = await engine.infer(input.param('name') ?? '', input.param('version'), body, {
          deadlineMs,
          arrivedAt,
        });
        return { body: result, headers: { 'x-model-version': result.model_version } };
      },
      { uses: engine },
    ),
  );
