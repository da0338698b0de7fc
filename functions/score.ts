import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { score } from '../lib/contracts/score';
import { route } from '../lib/http/route';
import { DEADLINE_HEADER, resolveDeadlineMs } from '../lib/inference/deadline';

/**
 * POST /api/score: synchronous scoring of one payment event. Its deadline (`x-deadline-ms`, else
 * `REQUEST_DEADLINE_MS`) starts as the invocation reaches the app. The body is read and validated first (a
 * bad one is answered 400 even under load); admission then judges the valid request (503 `overloaded` +
 * Retry-After when it cannot finish within what is left of that deadline). The answer is written by the
 * serializer compiled from its contract (lib/contracts/score.ts).
 */
app.http(
  score.name,
  route(
    score,
    async (input, { engine }, request) => {
      const arrivedAt = engine.arrival();
      const deadlineMs = resolveDeadlineMs(request.headers.get(DEADLINE_HEADER), engine.config.inference);
      const body = await input.body(engine.config.http.scoreBodyLimitBytes);
      const result = await engine.score(body, { deadlineMs, arrivedAt });
      return {
        body: result,
        headers: {
          'x-model-version': result.model.version,
          ...(result.ruleset === undefined ? {} : { 'x-ruleset-version': result.ruleset.version }),
        },
      };
    },
    { uses: subsystems('engine') },
  ),
);
