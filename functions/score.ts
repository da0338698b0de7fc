import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';
import { DEADLINE_HEADER, resolveDeadlineMs } from '../lib/inference/deadline';

/**
 * POST /api/score: synchronous scoring of one payment event. The admission gate decides first, before
 * the body is read (503 `overloaded` + Retry-After when full); the deadline (optional header
 * `x-deadline-ms`) runs from that admission.
 */
app.http('score', {
  route: 'score',
  methods: ['POST'],
  authLevel: 'function',
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    return engine.admit(async (arrival) => {
      const deadlineMs = resolveDeadlineMs(request.headers.get(DEADLINE_HEADER), engine.config.inference);
      const body = await readJsonBody(request, engine.config.http.scoreBodyLimitBytes);
      const result = await engine.score(body, { deadlineMs, arrivedAt: arrival.at });
      return jsonResponse(200, result, {
        'x-model-version': result.model.version,
        ...(result.ruleset === undefined ? {} : { 'x-ruleset-version': result.ruleset.version }),
      });
    });
  }),
});
