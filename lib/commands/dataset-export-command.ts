/**
 * `npm run dataset:export -- --from <date> --to <date> --out <file>`: joins the decisions logged in
 * `[from, to)` with their labels into a training set (JSON Lines; docs/learning-loop.md "Dataset format").
 * Reads the store the service writes (the blob container when storage is configured, else `DECISION_LOG_DIR`).
 *
 * `--signals <file>` (a signals document, `features/{name}/{version}.json`): rows get that version's aggregates;
 * those a decision did not log (declared after it) are computed by replaying the range's decisions in time order
 * (lib/learning/signals-replay.ts; docs/signals.md "Training on a signals version").
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { Config } from '../config/config';
import { datasetText, exportDataset } from '../learning/dataset';
import { loadSignals } from '../signals/shipped-signals';
import { dateArg, storeOf } from './learning-cli';

/** Exports the dataset; returns its stats (also printed). */
export async function datasetExport(
  argv: readonly string[],
  config: Config,
): Promise<{ rows: number; positives: number }> {
  const { values } = parseArgs({
    args: [...argv],
    options: { from: { type: 'string' }, to: { type: 'string' }, out: { type: 'string' }, signals: { type: 'string' } },
    strict: true,
  });
  const from = dateArg('from', values.from);
  const to = dateArg('to', values.to);
  if (values.out === undefined) throw new Error('--out <file> is required');
  const store = storeOf(config);
  const signals =
    values.signals === undefined ? undefined : loadSignals(readFileSync(values.signals, 'utf8'), values.signals);
  const exported = await exportDataset(store, from, to, signals === undefined ? {} : { signals });
  const { rows, stats } = exported;
  if (exported.replay !== undefined && exported.replay.replayed.length > 0)
    console.log(
      `replayed  ${exported.replay.replayed.join(', ')} over ${exported.replay.decisions} decisions (not logged by them)`,
    );
  const out = resolve(values.out);
  mkdirSync(dirname(out), { recursive: true });
  writeFileSync(out, datasetText(rows));
  console.log(
    `decisions ${stats.decisions}  labelled ${stats.labelled}  fraud ${stats.positives}  labels not joined yet ${stats.labelsWithoutDecision}`,
  );
  console.log(`dataset   ${out}`);
  return { rows: rows.length, positives: stats.positives };
}
