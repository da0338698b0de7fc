import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { describeProblemType } from '../lib/errors/errors';
import { jsonResponse, withProblems } from '../lib/http/http-io';

/**
 * GET /api/problems/{code}: what a problem `type` means. Every problem this app answers carries
 * `type: "/api/problems/<code>"`, a relative reference that resolves to this route (anonymous, cacheable).
 */
app.http('problemType', {
  route: 'problems/{code}',
  methods: ['GET'],
  authLevel: 'anonymous',
  handler: withProblems((request) =>
    Promise.resolve(
      jsonResponse(200, describeProblemType(request.params['code'] ?? ''), {
        'cache-control': 'public, max-age=86400',
      }),
    ),
  ),
});
