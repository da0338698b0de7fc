/**
 * A job of `npm run bench:swap` (its own process, no HTTP): swaps the heavy model `SWAPS` times the way
 * `SWAP_MODE` says and reports RSS after swaps 5, 25 and 50. The new version is loaded and warmed before
 * the old one is released, as in the service.
 * - `pool`: each version in its own worker pool, whose threads end with it (what the service does);
 * - `reuse`: every version's session created and released on one long-lived thread (the pattern of the
 *   known onnxruntime-node RSS growth).
 * With `SWAP_RECLAIM=1`, a full GC runs after each release (the service's `MODEL_RECLAIM_AFTER_SWAP`);
 * the orchestrator also varies `MALLOC_MMAP_THRESHOLD_` in this process's environment.
 */
import { promises as fs } from 'node:fs';
import type { InferenceBackend, SessionOptions } from '../lib/inference/backend';
import { batchedBackendFactory } from '../lib/inference/backend-factory';
import { inlineBackendFactory } from '../lib/inference/ort-session';
import { fullGc } from '../lib/model-rollout/reclaim';

const SESSION: SessionOptions = { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' };

async function main(): Promise<void> {
  const mode = process.env['SWAP_MODE'] === 'reuse' ? 'reuse' : 'pool';
  const gc = process.env['SWAP_RECLAIM'] === '1' ? fullGc() : undefined;
  const swaps = Number(process.env['SWAPS'] ?? 50);
  const files = (process.env['SWAP_FILES'] ?? '').split(',');
  const bytes = await Promise.all(files.map((f) => fs.readFile(f)));
  const factory =
    mode === 'reuse'
      ? inlineBackendFactory(SESSION)
      : batchedBackendFactory({
          mode: 'workers',
          workers: 1,
          batchMaxSize: 64,
          batchMaxSizeGpu: 32,
          batchWindowMs: 5,
          queueMax: 2048,
          session: SESSION,
        });
  const width = 17;
  const load = async (i: number): Promise<InferenceBackend> => {
    // a fresh copy per version, as an upload or a download is
    const b = await factory.load({
      bytes: Buffer.from(bytes[i % bytes.length] as Uint8Array),
      inputName: 'features',
      outputName: 'score',
      inputWidth: width,
    });
    for (const rows of [1, 2, 4, 8, 16, 32, 64]) await b.run(new Float32Array(rows * width), rows);
    return b;
  };
  const rssMb = (): number => Math.round(process.memoryUsage.rss() / 1024 / 1024);
  let current = await load(0);
  const rss: Record<string, number> = { start: rssMb() };
  const marks = new Set([5, 25, 50, swaps]);
  for (let i = 1; i <= swaps; i++) {
    const next = await load(i);
    const old = current;
    current = next;
    await old.dispose();
    gc?.();
    if (marks.has(i)) {
      await new Promise((r) => setTimeout(r, 300));
      rss[`after_${i}`] = rssMb();
    }
  }
  await current.dispose();
  process.stdout.write(`RESULT ${JSON.stringify({ mode, reclaim: gc !== undefined, swaps, rss_mb: rss })}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${String(err)}\n`);
  process.exit(1);
});
