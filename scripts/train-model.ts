/**
 * Trains the fraud model on seeded synthetic payments and writes `{out}/{version}.onnx` and `{out}/{version}.json`.
 *
 *     node dist/scripts/train-model.js [--seed 42] [--samples 200000] [--out models/fraud] [--version 1.0.0] [--epochs 20]
 *
 * Same arguments → byte-identical files (on a given machine). Exits 1 on invalid arguments or a failed check.
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MODEL_VERSION_RE } from '../lib/models/manifest';
import { serializeManifest, trainFraudModel } from '../lib/training/train-fraud-model';

export { serializeManifest, trainFraudModel } from '../lib/training/train-fraud-model';
export type { TrainFraudModelOptions, TrainedFraudModel } from '../lib/training/train-fraud-model';

/** Parsed command line of the script. */
export interface TrainCli {
  readonly seed: number;
  readonly samples: number;
  readonly out: string;
  readonly version: string;
  readonly epochs: number;
}

function intArg(name: string, raw: string | undefined, fallback: number, min: number): number {
  if (raw === undefined) return fallback;
  const v = Number(raw);
  if (!Number.isInteger(v) || v < min) throw new Error(`--${name} must be an integer >= ${min}`);
  return v;
}

/** Parses `argv` (without `node` and the script path). @throws Error on an invalid value. */
export function parseCli(argv: readonly string[]): TrainCli {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      seed: { type: 'string' },
      samples: { type: 'string' },
      out: { type: 'string' },
      version: { type: 'string' },
      epochs: { type: 'string' },
    },
    strict: true,
  });
  const version = values.version ?? '1.0.0';
  if (!MODEL_VERSION_RE.test(version)) throw new Error('--version must be MAJOR.MINOR.PATCH');
  return {
    seed: intArg('seed', values.seed, 42, 0),
    samples: intArg('samples', values.samples, 200_000, 1000),
    out: values.out ?? join('models', 'fraud'),
    version,
    epochs: intArg('epochs', values.epochs, 20, 1),
  };
}

async function main(): Promise<void> {
  const cli = parseCli(process.argv.slice(2));
  const started = Date.now();
  const elapsed = (): string => `${((Date.now() - started) / 1000).toFixed(1)} s`;
  const { onnx, manifest } = await trainFraudModel({
    seed: cli.seed,
    samples: cli.samples,
    version: cli.version,
    epochs: cli.epochs,
    log: (line) => console.log(`[${elapsed()}] ${line}`),
    onEpoch: (p) =>
      console.log(
        `[${elapsed()}] epoch ${String(p.epoch).padStart(3)}/${p.epochs}  loss ${p.loss.toFixed(5)}  train AUC ${p.auc.toFixed(4)}  lr ${p.learningRate.toFixed(4)}`,
      ),
  });
  const dir = resolve(cli.out);
  mkdirSync(dir, { recursive: true });
  const onnxPath = join(dir, manifest.file);
  const manifestPath = join(dir, `${cli.version}.json`);
  writeFileSync(onnxPath, onnx);
  writeFileSync(manifestPath, serializeManifest(manifest));

  const m = manifest.metrics ?? {};
  const pct = (k: string): string => `${((m[k] ?? NaN) * 100).toFixed(1)} %`;
  console.log('');
  console.log(`hold-out ROC AUC   ${m.rocAuc?.toFixed(4)}  (${m.holdoutSize} rows, ${m.holdoutPositives} frauds)`);
  console.log(
    `review  >= ${manifest.thresholds.review}  precision ${pct('precisionAtReview')}  recall ${pct('recallAtReview')}  flags ${pct('reviewRate')}`,
  );
  console.log(
    `decline >= ${manifest.thresholds.decline}  precision ${pct('precisionAtDecline')}  recall ${pct('recallAtDecline')}  flags ${pct('declineRate')}`,
  );
  console.log(`model     ${onnxPath} (${onnx.length} bytes)`);
  console.log(`manifest  ${manifestPath}`);
  console.log(`sha256    ${manifest.sha256}`);
  console.log(`done in ${elapsed()}`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
