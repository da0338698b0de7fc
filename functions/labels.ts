import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { sharedEngine } from '../lib/app';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/**
 * POST /api/labels: stores `{ "labels": [{ transactionId, label, reportedAt, source? }] }` (at most 1000)
 * beside the decision log. Idempotent per (transactionId, label). Answers `{ accepted, duplicates }`.
 */
app.http('labels', {
  route: 'labels',
  methods: ['POST'],
  authLevel: 'function',
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const body = await readJsonBody(request, engine.config.http.batchBodyLimitBytes);
    return jsonResponse(200, await engine.addLabels(body));
  }),
});
