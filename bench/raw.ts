/**
 * Variant (c): raw ONNX Runtime throughput in-process (no HTTP), per batch size and intra-op thread
 * setting, plus the data to judge the "fewer than 8 → run singly" rule. Run as a child process by the
 * orchestrator; prints one `RESULT {json}` line. Env: BENCH_MODEL (path), BENCH_QUICK (1/0).
 */
import * as ort from 'onnxruntime-node';
import { percentile } from '../test/support/load/percentile';

/** Figures of one batch size under one thread setting. */
export interface RawPoint {
  readonly batch: number;
  readonly threads: number;
  readonly rows_per_s: number;
  readonly mean_ms: number;
  readonly p50_ms: number;
  readonly p99_ms: number;
  readonly max_ms: number;
}

const BATCHES = [1, 2, 4, 8, 16, 32, 64, 128, 256];

async function measure(
  session: ort.InferenceSession,
  width: number,
  batch: number,
  threads: number,
  budgetMs: number,
): Promise<RawPoint> {
  const x = Float32Array.from({ length: batch * width }, (_, i) => Math.sin(i * 0.37) * 2);
  const feeds = { [session.inputNames[0] as string]: new ort.Tensor('float32', x, [batch, width]) };
  for (let i = 0; i < 5; i++) await session.run(feeds);
  const lat: number[] = [];
  const start = performance.now();
  while (performance.now() - start < budgetMs || lat.length < 10) {
    const t0 = performance.now();
    await session.run(feeds);
    lat.push(performance.now() - t0);
  }
  const total = performance.now() - start;
  const sorted = [...lat].sort((a, b) => a - b);
  const r2 = (v: number) => Math.round(v * 1000) / 1000;
  return {
    batch,
    threads,
    rows_per_s: Math.round((lat.length * batch * 1000) / total),
    mean_ms: r2(lat.reduce((s, v) => s + v, 0) / lat.length),
    p50_ms: r2(percentile(sorted, 50)),
    p99_ms: r2(percentile(sorted, 99)),
    max_ms: r2(sorted.at(-1) ?? Number.NaN),
  };
}

async function main(): Promise<void> {
  const model = process.env['BENCH_MODEL'] ?? '';
  const budgetMs = process.env['BENCH_QUICK'] === '1' ? 250 : 1000;
  const points: RawPoint[] = [];
  for (const threads of [1, 0]) {
    const session = await ort.InferenceSession.create(model, {
      graphOptimizationLevel: 'all',
      ...(threads > 0 ? { intraOpNumThreads: threads } : {}),
    });
    const meta = session.inputMetadata[0] as { shape?: readonly (number | string)[] } | undefined;
    const width = Number(meta?.shape?.at(-1) ?? process.env['BENCH_WIDTH']);
    for (const batch of BATCHES) points.push(await measure(session, width, batch, threads, budgetMs));
    await session.release();
  }
  const best = points.reduce((a, b) => (b.rows_per_s > a.rows_per_s ? b : a));
  // the service's own thread budget on this machine: one worker with one intra-op thread
  const bestT1 = points.filter((p) => p.threads === 1).reduce((a, b) => (b.rows_per_s > a.rows_per_s ? b : a));
  const single = points.filter((p) => p.batch === 1).reduce((a, b) => (b.rows_per_s > a.rows_per_s ? b : a));
  const one = (t: number, b: number) => points.find((p) => p.threads === t && p.batch === b) as RawPoint;
  // The seed article's rule: "if fewer than 8, run singly". Compare one batch of n with n single runs (1 intra-op thread, as the workers use).
  const rule8 = [2, 4, 8].map((n) => ({
    n,
    batched_ms: one(1, n).mean_ms,
    singly_ms: Math.round(n * one(1, 1).mean_ms * 1000) / 1000,
  }));
  const result = {
    rps_batch1: single.rows_per_s,
    rps_best: best.rows_per_s,
    best_batch: best.batch,
    best_threads: best.threads,
    rps_best_t1: bestT1.rows_per_s,
    best_batch_t1: bestT1.batch,
    p50_ms: single.p50_ms,
    p99_ms: single.p99_ms,
    max_ms: single.max_ms,
    points,
    rule_of_8: rule8.map((r) => ({ ...r, winner: r.batched_ms <= r.singly_ms ? 'batched' : 'singly' })),
  };
  process.stdout.write(`RESULT ${JSON.stringify(result)}\n`);
}

void main();
