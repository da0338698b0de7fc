/**
 * Issue 37's "Must show": a model trained by `npm run model:train` on a signals version with a new aggregate
 * uploads, validates and serves as a 50 % canary beside the shipped model; both answer 200 and `x-model-version`
 * shows both.
 *
 * Generated traffic where fraud is card sharing (several users on one card fingerprint: what `card_users_1h`, which
 * the shipped 17 features do not see, counts) is scored through the engine with the shipped signals, labelled and
 * exported with `dataset:export --signals examples/signals/default-1.1.0.json`: the decisions did not log
 * `card_users_1h`, so the export replays it over the log in time order. `model:train --signals` trains on the
 * version's 18 signals; the new model must beat the shipped one's held-out AUC. A draft ruleset reading the new
 * signal is backtested: the decisions did not log it (reported), and with `--signals` it is replayed. Then, under the local host, signals
 * 1.1.0 and the model are uploaded, the model as a candidate, and a 50 % canary serves both versions.
 */
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import { InProcessBus } from '../../local/in-process-bus';
import { loadConfig, type Config } from '../../lib/config/config';
import type { ContextProvider } from '../../lib/context/context-provider';
import type { UserContext } from '../../lib/domain/user-context';
import { manifestSchema, type ModelManifest } from '../../lib/models/manifest';
import { silentLogger } from '../../lib/platform/logger';
import { Prng } from '../../lib/training/prng';
import { generatePayments } from '../../lib/training/synthetic-payments';
import { backtestCommand } from '../../lib/commands/backtest-command';
import { datasetExport } from '../../lib/commands/dataset-export-command';
import { parseCli, trainOnDataset } from '../../lib/commands/train-command';
import { startEmbeddedRollout, type EmbeddedRollout } from '../model-rollout/support/embedded-rollout';
import { eventually } from '../model-rollout/support/eventually';
import { writeFolderModel } from '../model-rollout/support/models';
import { validEvent } from '../support/events';

/** The settings the offline commands read, as their scripts read them (from the environment this test sets). */
const env = (): Config => loadConfig(process.env);

const N = 3000;
const ROOT = path.resolve(__dirname, '../../..');
const SIGNALS_1_1 = path.join(ROOT, 'examples', 'signals', 'default-1.1.0.json');

/** Payments where about 15 % are card testers: many users on a few shared cards (the fraud). */
function cardSharing(seed: number) {
  const rng = new Prng(seed);
  return generatePayments({ seed, count: N }).map((s, i) => {
    const tester = rng.next() < 0.15;
    const card = tester ? `tok_shared_${Math.floor(rng.next() * 12)}` : `tok_own_${i}`;
    const fraud = tester ? rng.next() < 0.9 : rng.next() < 0.02;
    return { event: { ...s.event, cardFingerprint: card }, context: s.context, fraud };
  });
}

describe('a model trained on a signals version with a new aggregate', () => {
  let dir: string;
  let rollout: EmbeddedRollout | undefined;
  const saved = { ...process.env };
  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'signals-train-'));
  });
  after(async () => {
    await rollout?.dispose();
    process.env = saved;
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('trains on the replayed aggregate, then serves as a 50 % canary beside the shipped model', async () => {
    const samples = cardSharing(37);
    const contexts = new Map<string, UserContext>(samples.map((s) => [s.event.transactionId, s.context]));
    const provider: ContextProvider = {
      lookup: (e) => Promise.resolve({ context: contexts.get(e.transactionId) as UserContext, cache: 'hit' }),
      dispose: () => Promise.resolve(),
    };
    process.env['DECISION_LOG_DIR'] = dir;
    for (const k of ['DECISION_LOG_HASH_KEY', 'ModelStorage', 'AzureWebJobsStorage']) delete process.env[k];
    const config = loadConfig({ DECISION_LOG_DIR: dir, INFERENCE_MODE: 'inline', REQUEST_DEADLINE_MS: '10000' });
    const engine = await createEngine(config, { logger: silentLogger, context: provider, bus: new InProcessBus() });
    await engine.start();
    for (let i = 0; i < N; i += 200) await engine.scoreBatch({ events: samples.slice(i, i + 200).map((s) => s.event) });
    const labels = samples.map((s) => ({
      transactionId: s.event.transactionId,
      label: s.fraud ? 'fraud' : 'legit',
      reportedAt: '2026-12-01T00:00:00Z',
      source: 'e2e',
    }));
    for (let i = 0; i < N; i += 1000) await engine.addLabels({ labels: labels.slice(i, i + 1000) });
    await engine.dispose(); // flushes the decision log

    const day = Date.now();
    const range = [
      '--from',
      new Date(day - 86_400_000).toISOString(),
      '--to',
      new Date(day + 86_400_000).toISOString(),
    ];
    const dataset = path.join(dir, 'out', 'dataset.jsonl');
    const exported = await datasetExport([...range, '--out', dataset, '--signals', SIGNALS_1_1], env());
    assert.equal(exported.rows, N);
    const row = JSON.parse(readFileSync(dataset, 'utf8').split('\n')[0] as string) as {
      signals?: Record<string, number>;
    };
    assert.equal(typeof row.signals?.['card_users_1h'], 'number', 'the replayed aggregate is in the rows');

    // a draft reading the new signal: the decisions did not log it; only when asked (--signals) is it replayed
    const draft = path.join(ROOT, 'examples', 'signals', 'fraud-rules-1.1.0.json');
    const plain = await backtestCommand(['--ruleset', draft, ...range], env());
    assert.deepEqual(plain.signals, {
      used: ['card_users_1h'],
      replayed: [],
      recordsWithout: N,
      notLogged: ['card_users_1h'],
    });
    const asked = await backtestCommand(['--ruleset', draft, ...range, '--signals', SIGNALS_1_1], env());
    assert.deepEqual(asked.signals, {
      used: ['card_users_1h'],
      replayed: ['card_users_1h'],
      recordsWithout: 0,
      notLogged: [],
    });
    assert.ok((asked.rules['card-shared-1h']?.hits ?? 0) > 0, 'the shared cards are caught in the replay');

    const out = path.join(dir, 'models');
    await trainOnDataset(
      parseCli(['--dataset', dataset, '--out', out, '--epochs', '10', '--signals', SIGNALS_1_1]),
      dataset,
    );
    const manifest: ModelManifest = manifestSchema.parse(
      JSON.parse(readFileSync(path.join(out, '1.1.0.json'), 'utf8')),
    );
    assert.deepEqual(manifest.signals, { name: 'default', version: '1.1.0' });
    assert.equal(manifest.features.length, 18);
    assert.equal(manifest.features[0]?.name, 'card_users_1h');
    const m = manifest.metrics ?? {};
    assert.ok((m['rocAuc'] ?? 0) > (m['currentRocAuc'] ?? 1) + 0.1, `AUC ${m['rocAuc']} vs ${m['currentRocAuc']}`);

    // under the local host (npm start's embedded defaults): signals 1.1.0, then the model as a candidate
    rollout = await startEmbeddedRollout();
    const { api, folder } = rollout;
    await fs.mkdir(path.join(folder.dir, 'features', 'default'), { recursive: true });
    await fs.copyFile(SIGNALS_1_1, path.join(folder.dir, 'features', 'default', '1.1.0.json'));
    await eventually(
      async () => ((await (await fetch(`${api}/signals/default`)).json()) as { serving?: string }).serving,
      (v) => v === '1.1.0',
      'signals 1.1.0 serving',
      30_000,
    );
    const onnx = readFileSync(path.join(out, '1.1.0.onnx'));
    await writeFolderModel(folder.dir, '1.1.0', onnx, manifest, { rollout: 'candidate', force: 'true' });
    await eventually(
      async () =>
        (await (await fetch(`${api}/models/fraud`)).json()) as { fleet?: { versions: { version: string }[] } },
      (s) => s.fleet?.versions.some((v) => v.version === '1.1.0') === true,
      'model 1.1.0 published as a candidate',
      60_000,
    );
    const put = await fetch(`${api}/models/fraud/traffic`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ candidate: '1.1.0', canaryPercent: 50 }),
    });
    assert.equal(put.status, 200, await put.text());
    const seen = new Map<string, number>();
    for (let i = 0; i < 60; i++) {
      const res = await fetch(`${api}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
        body: JSON.stringify(
          validEvent({ transactionId: `tx-canary-${i}`, userId: `canary-user-${i}`, cardFingerprint: 'tok_x' }),
        ),
      });
      assert.equal(res.status, 200, await res.text());
      const v = res.headers.get('x-model-version') ?? 'none';
      seen.set(v, (seen.get(v) ?? 0) + 1);
    }
    assert.deepEqual([...seen.keys()].sort(), ['1.0.0', '1.1.0'], JSON.stringify([...seen]));
  });
});
