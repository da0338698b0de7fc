import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/** POST /api/score: synchronous scoring of one payment event. */
app.http('score', {
  route: 'score',
  methods: ['POST'],
  authLevel: 'function',
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await readJsonBody(request, engine.config.http.scoreBodyLimitBytes);
    const result = await engine.score(body);
    return jsonResponse(200, result, { 'x-model-version': result.model.version });
  }),
});
