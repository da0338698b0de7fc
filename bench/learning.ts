/**
 * The decision log's cost on the request path, run by `npm run bench` (and alone by `npm run bench:learning`):
 * the service with the log on (writing to a local folder) and off, side by side. The maximum is measured
 * closed-loop with the log off; then both arms run open-loop at 40 % of it, alternating, and
 * `learning.p99_ratio` = the median over rounds of p99(on) / p99(off) in the same round (`paired-p99.ts`;
 * target ≤ 1.05).
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { readFileSync } from 'node:fs';
import { appRoot } from '../lib/config/app-root';
import { FEATURE_COUNT, featurize } from '../lib/features/featurizer';
import { toDecisionRecord } from '../lib/learning/decision-record';
import { KeyedHash } from '../lib/platform/keyed-hash';
import { manifestSchema } from '../lib/models/manifest';
import type { ScoreResult } from '../lib/scoring/scorer';
import { generatePayments } from '../lib/training/synthetic-payments';
import { startServer, type ServerChild } from './children';
import { loadRun, medianOf, type RunFigures, type Spread } from './load';
import { pairedP99 } from './paired-p99';
import { paymentBody } from '../test/support/load/payment-body';

/** What {@link benchLearning} reports (`bench.json` → `learning`). */
export interface LearningFigures {
  readonly max_rps_log_off: number;
  readonly offered_rps: number;
  readonly log_on: RunFigures;
  readonly log_off: RunFigures;
  /** Median over rounds of p99(on) / p99(off) in the same round, at 40 % of the maximum. */
  readonly p99_ratio: number;
  /** Each round's ratio, with their median, min and max. */
  readonly p99_ratio_rounds: Spread;
  /** Decision records the "on" arm wrote (the log really ran). */
  readonly records_written: number;
  /** In process, per payment: building its record (three HMACs, copies) and serializing it, µs (median of 5 runs). */
  readonly record_us: number;
  readonly target: { readonly p99_ratio_max: number; readonly met: boolean };
}

/** Options of {@link benchLearning}. */
export interface LearningBenchOptions {
  readonly env: Record<string, string>;
  readonly rounds: number;
  readonly durationSec: number;
  readonly warmSec: number;
  readonly connections: number;
  readonly log: (msg: string) => void;
}

async function countLines(dir: string): Promise<number> {
  let n = 0;
  for (const e of await fs.readdir(dir, { withFileTypes: true, recursive: true }).catch(() => [])) {
    if (!e.isFile() || !e.name.endsWith('.jsonl')) continue;
    const text = await fs.readFile(path.join(e.parentPath, e.name), 'utf8');
    n += text.split('\n').filter((l) => l !== '').length;
  }
  return n;
}

/** The request path's own cost of the log, in process: record + JSON line per payment, µs. */
function recordCostUs(): number {
  const manifest = manifestSchema.parse(
    JSON.parse(readFileSync(path.join(appRoot(), 'models', 'fraud', '1.0.0.json'), 'utf8')),
  );
  const hash = new KeyedHash('bench-key-0123456789');
  const samples = generatePayments({ seed: 5, count: 20_000 });
  const rows = samples.map((s) => featurize(s.event, s.context, new Float32Array(FEATURE_COUNT)));
  const result = (id: string): ScoreResult =>
    ({
      transactionId: id,
      score: 0.01,
      decision: 'approve',
      model: { name: 'fraud', version: '1.0.0' },
      source: 'local',
    }) as unknown as ScoreResult;
  const runs: number[] = [];
  let sink = 0;
  for (let r = 0; r < 5; r++) {
    const t0 = performance.now();
    samples.forEach((s, i) => {
      const rec = toDecisionRecord(
        {
          event: s.event,
          row: rows[i] as Float32Array,
          velocity: s.context.velocity,
          manifest,
          result: result(s.event.transactionId),
        },
        hash,
        Date.now(),
      );
      sink += JSON.stringify(rec).length;
    });
    runs.push(((performance.now() - t0) * 1000) / samples.length);
  }
  if (sink === 0) throw new Error('nothing serialized');
  return Math.round((runs.sort((a, b) => a - b)[2] as number) * 10) / 10;
}

/** Runs the log on / off comparison. */
export async function benchLearning(o: LearningBenchOptions): Promise<LearningFigures> {
  const recordUs = recordCostUs();
  o.log(`learning: ${recordUs} µs per payment to build and serialize its record (in process)`);
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-decisions-'));
  const arms: Record<'on' | 'off', ServerChild | undefined> = { on: undefined, off: undefined };
  try {
    arms.off = await startServer('servers/service', { ...o.env, DECISION_LOG_ENABLED: 'false' });
    arms.on = await startServer('servers/service', { ...o.env, DECISION_LOG_ENABLED: 'true', DECISION_LOG_DIR: dir });
    const run = (arm: 'on' | 'off', durationSec: number, rate?: number): Promise<RunFigures> =>
      loadRun({
        url: (arms[arm] as ServerChild).url,
        path: '/api/score',
        body: paymentBody,
        connections: o.connections,
        durationSec,
        ...(rate === undefined ? {} : { rate }),
      });
    await run('off', o.warmSec);
    await run('on', o.warmSec);
    const max = medianOf([await run('off', o.durationSec)]).rps;
    const offered = Math.max(1, Math.round(max * 0.4));
    o.log(`learning: max ${max} req/s with the log off; both arms at ${offered} req/s (40 %)`);
    const paired = await pairedP99(
      o.rounds,
      (arm) => run(arm === 'a' ? 'off' : 'on', o.durationSec, offered),
      (arm, r, f) => o.log(`learning round ${r}: log ${arm === 'a' ? 'off' : 'on'} p99 ${f.p99_ms} ms, ${f.rps} req/s`),
    );
    const on = paired.b;
    const off = paired.a;
    const ratio = paired.p99_ratio;
    await arms.on.stop(); // SIGTERM: the log is flushed on the way out
    arms.on = undefined;
    const written = await countLines(dir);
    o.log(`learning: the log-on arm wrote ${written} decision records`);
    return {
      max_rps_log_off: max,
      offered_rps: offered,
      log_on: on,
      log_off: off,
      p99_ratio: ratio,
      p99_ratio_rounds: paired.p99_ratio_rounds,
      records_written: written,
      record_us: recordUs,
      target: { p99_ratio_max: 1.05, met: ratio <= 1.05 },
    };
  } finally {
    await arms.on?.stop();
    await arms.off?.stop();
    await fs.rm(dir, { recursive: true, force: true });
  }
}

/** `npm run bench:learning [-- --quick]`: this comparison alone; writes bench/results/learning.json. */
async function main(): Promise<void> {
  const quick = process.argv.includes('--quick');
  const figures = await benchLearning({
    env: {
      MODEL_DIR: path.join(appRoot(), 'models'),
      MODEL_NAME: 'fraud',
      LOG_LEVEL: 'error',
      REDIS_URL: process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: 'bench:learn:',
    },
    rounds: quick ? 2 : 4,
    durationSec: quick ? 4 : 10,
    warmSec: 2,
    connections: 32,
    log: (m) => process.stderr.write(`[bench] ${m}\n`),
  });
  const out = { learning: figures };
  const dir = path.join(appRoot(), 'bench', 'results');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'learning.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(
    `learning.p99_ratio ${figures.p99_ratio} (p99 log on ${figures.log_on.p99_ms} ms / off ${figures.log_off.p99_ms} ms at ${figures.offered_rps} req/s; goal <= 1.05); record ${figures.record_us} µs per payment\n`,
  );
}

if (require.main === module)
  main().catch((err: unknown) => {
    console.error(err);
    process.exitCode = 1;
  });
