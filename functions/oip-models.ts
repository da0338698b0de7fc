import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest } from '@azure/functions';
import { subsystems } from '../lib/app';
import { using } from '../lib/http/route';
import { jsonResponse, readJsonBody } from '../lib/http/http-io';
import { DEADLINE_HEADER, resolveDeadlineMs } from '../lib/inference/deadline';
import { readyResponse, withOipErrors } from '../lib/oip/oip-http';

const name = (r: HttpRequest): string => r.params['name'] ?? '';
const version = (r: HttpRequest): string | undefined => r.params['version'];

/** The same endpoint with and without `/versions/{version}` (a route cannot hold an optional middle segment). */
function both(id: string, suffix: string, methods: ('GET' | 'POST')[], handler: Parameters<typeof withOipErrors>[0]) {
  for (const [fn, route] of [
    [id, `v2/models/{name}${suffix}`],
    [`${id}Version`, `v2/models/{name}/versions/{version}${suffix}`],
  ] as const)
    app.http(fn, { route, methods, authLevel: 'function', handler: withOipErrors(handler) });
}

/** GET /api/v2/models/{name}[/versions/{version}]: model metadata (versions, platform, inputs and outputs from the ONNX graph). */
const oip = subsystems('oip');
const engine = subsystems('engine');

both(
  'oipModelMetadata',
  '',
  ['GET'],
  using(oip, async ({ oip }, r: HttpRequest) => jsonResponse(200, await oip.modelMetadata(name(r), version(r)))),
);

/** GET /api/v2/models/{name}[/versions/{version}]/ready: 200 `{ name, ready: true }` when loaded here; 400 when not; 404 when unknown. */
both(
  'oipModelReady',
  '/ready',
  ['GET'],
  using(oip, async ({ oip }, r: HttpRequest) => {
    const ready = await oip.modelReady(name(r), version(r));
    return readyResponse(ready, { name: name(r), ...(version(r) === undefined ? {} : { version: version(r) }) });
  }),
);

/**
 * POST /api/v2/models/{name}[/versions/{version}]/infer: inference (active version, or exactly the one named).
 * As for /api/score: header `x-deadline-ms`, the deadline starts as the invocation reaches the app, the body
 * is read and validated first (400 even under load), then admission judges the valid request.
 */
both(
  'oipModelInfer',
  '/infer',
  ['POST'],
  using(engine, async ({ engine }, r: HttpRequest) => {
    const arrivedAt = engine.arrival();
    const deadlineMs = resolveDeadlineMs(r.headers.get(DEADLINE_HEADER), engine.config.inference);
    const body = await readJsonBody(r, engine.config.http.oipBodyLimitBytes);
    const result = await engine.infer(name(r), version(r), body, { deadlineMs, arrivedAt });
    return jsonResponse(200, result, { 'x-model-version': result.model_version });
  }),
);
