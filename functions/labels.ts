import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { subsystems } from '../lib/app';
import { labels } from '../lib/contracts/score';
import { route } from '../lib/http/route';

/**
 * POST /api/labels: stores `{ "labels": [{ transactionId, label, reportedAt, source? }] }` (at most 1000)
 * beside the decision log. Idempotent per (transactionId, label). Answers `{ accepted, duplicates }`.
 */
app.http(
  labels.name,
  route(
    labels,
    async (input, { engine }) => {
      const body = await input.body(engine.config.http.batchBodyLimitBytes);
      return { body: await engine.addLabels(body) };
    },
    { uses: subsystems('engine') },
  ),
);
