import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { scoreBatch } from '../lib/contracts/score';
import { route } from '../lib/http/route';
import { DEADLINE_HEADER, headerDeadlineMs } from '../lib/inference/deadline';

/**
 * POST /api/score/batch: scores `{ "events": [...] }` (up to `BATCH_MAX_EVENTS`, body up to
 * `BATCH_BODY_LIMIT_BYTES`). Answers `{ "results": [...] }` in order; invalid events get their own
 * problem. The body is read and validated first (a bad one is answered 400 even under load); admission then
 * judges the valid events as one request. The deadline starts as the invocation reaches the app:
 * `x-deadline-ms`, else one that scales with the valid events (`BATCH_DEADLINE_PER_EVENT_MS`).
 */
app.http(
  scoreBatch.name,
  route(
    scoreBatch,
    async (input, { engine }, request) => {
      const arrivedAt = engine.arrival();
      const deadlineMs = headerDeadlineMs(request.headers.get(DEADLINE_HEADER), engine.config.inference);
      const body = await input.body(engine.config.http.batchBodyLimitBytes);
      const result = await engine.scoreBatch(body, { arrivedAt, ...(deadlineMs === undefined ? {} : { deadlineMs }) });
      // the version(s) that scored this batch (two while a canary splits its users)
      const versions = [...new Set(result.results.flatMap((r) => ('model' in r ? [r.model.version] : [])))];
      const rulesets = [
        ...new Set(result.results.flatMap((r) => ('model' in r && r.ruleset !== undefined ? [r.ruleset.version] : []))),
      ];
      return {
        body: result,
        headers: {
          ...(versions.length === 0 ? {} : { 'x-model-version': versions.join(',') }),
          ...(rulesets.length === 0 ? {} : { 'x-ruleset-version': rulesets.join(',') }),
        },
      };
    },
    { uses: subsystems('engine') },
  ),
);
