/**
 * `npm run model:train`. Trains the fraud model on seeded synthetic payments and writes `{out}/{version}.onnx` and `{out}/{version}.json`.
 *
 *     npm run model:train -- [--seed 42] [--samples 200000] [--out models/fraud] [--version 1.0.0] [--epochs 20]
 *     npm run model:train -- --dataset <file> [--current models/fraud/1.0.0.json] [--out ...] [--version ...]
 *       [--signals features/default/1.1.0.json]
 *
 * With `--dataset` (an export of `npm run dataset:export`), trains on those labelled decisions instead, and the
 * manifest's metrics hold the held-out AUC, precision and recall of the new model and, as `current*`, of the
 * current model (`--current`, default the newest manifest in `models/fraud`) on the same split. `--version`
 * defaults to the current version's next minor. `--signals` trains on every signal of that version (its aggregates and
 * features, read from the rows' logged or replayed `signals`), and the manifest names the version (`signals`).
 * Same arguments → byte-identical files (on a given machine). Exits 1 on invalid arguments or a failed check.
 */
import { mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { parseDataset } from '../learning/dataset';
import { loadSignals } from '../signals/shipped-signals';
import { manifestSchema } from '../models/manifest';
import { trainFromDataset } from '../training/train-from-dataset';
import { join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { MODEL_VERSION_RE } from '../models/manifest';
import { serializeManifest, trainFraudModel } from '../training/train-fraud-model';

/** Parsed command line of the script. */
export interface TrainCli {
  readonly seed: number;
  readonly samples: number;
  readonly out: string;
  readonly version: string;
  readonly epochs: number;
  readonly dataset: string | undefined;
  readonly current: string | undefined;
  readonly versionGiven: boolean;
  /** `--signals <file>`: train on this signals version's features (every signal it declares; docs/signals.md). */
  readonly signals: string | undefined;
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
      dataset: { type: 'string' },
      current: { type: 'string' },
      signals: { type: 'string' },
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
    dataset: values.dataset,
    current: values.current,
    versionGiven: values.version !== undefined,
    signals: values.signals,
  };
}

/** The newest manifest in `models/fraud` (by semantic version). */
function newestManifest(): string {
  const dir = join('models', 'fraud');
  const key = (f: string): number[] => f.replace('.json', '').split('.').map(Number);
  const files = readdirSync(dir)
    .filter((f) => /^\d+\.\d+\.\d+\.json$/.test(f))
    .sort((a, b) => {
      const [x, y] = [key(a), key(b)];
      return (x[0]! - y[0]!) * 1e12 + (x[1]! - y[1]!) * 1e6 + (x[2]! - y[2]!);
    });
  const last = files.at(-1);
  if (last === undefined) throw new Error('no current model in models/fraud (pass --current)');
  return join(dir, last);
}

/** `--dataset`: trains the next version on labelled decisions, compared with the current model. */
export async function trainOnDataset(cli: TrainCli, dataset: string): Promise<void> {
  const rows = parseDataset(readFileSync(dataset, 'utf8'));
  const currentPath = cli.current ?? newestManifest();
  const manifest = manifestSchema.parse(JSON.parse(readFileSync(currentPath, 'utf8')));
  const onnxCurrent = readFileSync(join(dirname(currentPath), manifest.file));
  const [major, minor] = manifest.version.split('.').map(Number);
  const version = cli.versionGiven ? cli.version : `${major}.${(minor as number) + 1}.0`;
  const signals = cli.signals === undefined ? undefined : loadSignals(readFileSync(cli.signals, 'utf8'), cli.signals);
  const out = await trainFromDataset(rows, {
    version,
    ...(signals === undefined
      ? {}
      : {
          // every signal of the version, aggregates first: each read from the row's logged (or replayed) values
          features: signals.names.map((name) => ({ name, definition: signals.definition(name) ?? name })),
          signals: { name: signals.name, version: signals.version },
        }),
    current: { onnx: onnxCurrent, manifest },
    epochs: cli.epochs,
    seed: cli.seed,
    log: (l) => console.log(l),
  });
  const dir = resolve(cli.out);
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, out.manifest.file), out.onnx);
  writeFileSync(join(dir, `${version}.json`), serializeManifest(out.manifest));
  const f = (v: number | undefined): string => (v === undefined ? '   -  ' : v.toFixed(4));
  console.log(`held-out metrics        new ${version}   current ${manifest.version}`);
  for (const k of ['rocAuc', 'precisionAtReview', 'recallAtReview', 'precisionAtDecline', 'recallAtDecline'] as const)
    console.log(`${k.padEnd(22)}  ${f(out.heldOut[k])}      ${f(out.current?.[k])}`);
  console.log(`model     ${join(dir, out.manifest.file)}`);
  console.log(`manifest  ${join(dir, `${version}.json`)}`);
}

/** `npm run model:train`: trains on synthetic payments, or with `--dataset` on labelled decisions. */
export async function trainCommand(argv: readonly string[]): Promise<void> {
  const cli = parseCli(argv);
  if (cli.dataset !== undefined) return trainOnDataset(cli, cli.dataset);
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
