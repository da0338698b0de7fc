/**
 * The loop end to end on generated traffic whose fraud pattern has shifted (the shipped model is stale): score it
 * through the engine (decision log on a temp folder), label it through the labels API, export the dataset,
 * retrain with `model:train --dataset`, and backtest the candidate model and rulesets. The new model must beat
 * the current one's held-out AUC by at least {@link AUC_MARGIN}. Then one user is erased by keyed hash.
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
import type { Engine } from '../../lib/engine';
import { manifestSchema } from '../../lib/models/manifest';
import { silentLogger } from '../../lib/platform/logger';
import { Prng } from '../../lib/training/prng';
import { generatePayments } from '../../lib/training/synthetic-payments';
import { backtestCommand } from '../../lib/commands/backtest-command';
import { datasetExport } from '../../lib/commands/dataset-export-command';
import { eraseCommand } from '../../lib/commands/erase-command';
import { parseCli, trainOnDataset } from '../../lib/commands/train-command';

/** The settings the offline commands read, as their scripts read them (from the environment this test sets). */
const env = (): Config => loadConfig(process.env);

/** The least held-out AUC gain of the retrained model over the stale one. */
const AUC_MARGIN = 0.15;
const N = 6000;
const ROOT = path.resolve(__dirname, '../../..');

/**
 * The shifted pattern: fraud now hides in small POS payments from known devices of old accounts (the shipped
 * model learnt the opposite: big amounts, new devices, web). Latent logit + noise, Bernoulli label.
 */
function shiftedLabels(seed: number): { events: ReturnType<typeof generatePayments>; fraud: boolean[] } {
  const events = generatePayments({ seed, count: N });
  const rng = new Prng(seed + 1);
  const fraud = events.map((s) => {
    const usual = s.context.profile?.usualAmount ?? 50;
    const small = Math.log((s.event.amount + 1) / (usual + 1)) < -0.3 ? 1 : 0;
    const z =
      -4.2 +
      2.2 * Number(s.event.channel === 'pos') +
      1.8 * small +
      1.0 * Number(s.event.deviceId === undefined) +
      0.8 * Number(s.context.profile !== null) +
      rng.normal(0, 0.7);
    return rng.next() < 1 / (1 + Math.exp(-z));
  });
  return { events, fraud };
}

describe('learning loop end to end', () => {
  let dir: string;
  let engine: Engine;
  const saved = { ...process.env };
  const { events, fraud } = shiftedLabels(2026);
  const contexts = new Map<string, UserContext>(events.map((s) => [s.event.transactionId, s.context]));
  const provider: ContextProvider = {
    lookup: (e) => Promise.resolve({ context: contexts.get(e.transactionId) as UserContext, cache: 'hit' }),
    dispose: () => Promise.resolve(),
  };

  before(async () => {
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'loop-e2e-'));
    process.env['DECISION_LOG_DIR'] = dir; // the offline commands read the same settings as the service
    delete process.env['DECISION_LOG_HASH_KEY'];
    delete process.env['ModelStorage'];
    delete process.env['AzureWebJobsStorage'];
    const config = loadConfig({ DECISION_LOG_DIR: dir, INFERENCE_MODE: 'inline', REQUEST_DEADLINE_MS: '10000' });
    engine = await createEngine(config, { logger: silentLogger, context: provider, bus: new InProcessBus() });
    await engine.start();
  });
  after(async () => {
    process.env = saved;
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('scores, labels, exports, retrains (AUC gain ≥ margin) and backtests; then erases one user', async () => {
    for (let i = 0; i < N; i += 200) {
      const { results } = await engine.scoreBatch({ events: events.slice(i, i + 200).map((s) => s.event) });
      assert.ok(results.every((r) => 'decision' in r));
    }
    const labels = events.map((s, i) => ({
      transactionId: s.event.transactionId,
      label: fraud[i] === true ? (i % 3 === 0 ? 'chargeback' : 'fraud') : 'legit',
      reportedAt: '2026-12-01T00:00:00Z',
      source: 'e2e',
    }));
    for (let i = 0; i < N; i += 1000) await engine.addLabels({ labels: labels.slice(i, i + 1000) });
    await engine.dispose(); // flushes the decision log

    const day = Date.now();
    const from = new Date(day - 86_400_000).toISOString();
    const to = new Date(day + 86_400_000).toISOString();
    const dataset = path.join(dir, 'out', 'dataset.jsonl');
    const exported = await datasetExport(['--from', from, '--to', to, '--out', dataset], env());
    assert.equal(exported.rows, N, 'every scored payment is labelled');
    assert.equal(exported.positives, fraud.filter(Boolean).length);

    const out = path.join(dir, 'models');
    await trainOnDataset(parseCli(['--dataset', dataset, '--out', out, '--epochs', '10']), dataset);
    const manifest = manifestSchema.parse(JSON.parse(readFileSync(path.join(out, '1.1.0.json'), 'utf8')));
    const m = manifest.metrics ?? {};
    const gain = (m['rocAuc'] ?? 0) - (m['currentRocAuc'] ?? 1);
    console.log(
      `held-out AUC new ${m['rocAuc']} vs current ${m['currentRocAuc']} (gain ${gain.toFixed(3)}, margin ${AUC_MARGIN}); ` +
        `recall@review new ${m['recallAtReview']} vs current ${m['currentRecallAtReview']}`,
    );
    assert.ok(gain >= AUC_MARGIN, `AUC gain ${gain} ≥ ${AUC_MARGIN}`);
    assert.ok(manifest.drift !== undefined, 'the new manifest carries drift bins');

    // backtest: the candidate model and the shipped ruleset; a block list entry added after the payments (today's
    // entries, matched by keyed hash) is not credited: each record holds the memberships its decision used
    const listed = events[0]?.event.userId as string;
    const lists = path.join(dir, 'lists.json');
    await fs.writeFile(lists, JSON.stringify({ blocked_users: [listed] }));
    const shipped = path.join(ROOT, 'rulesets', 'fraud-rules', '1.0.0.json');
    const report = await backtestCommand(
      [
        ...['--ruleset', shipped, '--model', path.join(out, '1.1.0.json'), '--lists', lists],
        ...['--from', from, '--to', to],
      ],
      env(),
    );
    assert.equal(report.decisions, N);
    assert.equal(report.labelled, N);
    assert.deepEqual(report.notReplayable, []);
    assert.ok(report.candidate.recall > report.current.recall + 0.1, JSON.stringify(report));
    assert.ok(Object.values(report.changes).reduce((a, b) => a + b, 0) > 0, 'some decisions change');
    assert.deepEqual(report.lists, { recordsWithoutMemberships: 0, currentEntries: [], notReplayed: [] });
    assert.equal(report.rules['blocked-user'], undefined, 'the later entry blocks nothing in the replay');

    // a rule that reads the raw user id is reported, not silently skipped
    const doc = JSON.parse(readFileSync(shipped, 'utf8')) as { version: string; rules: unknown[] };
    doc.version = '1.0.1-raw';
    doc.rules.push({ id: 'vip-users', description: '', when: 'event.userId.startsWith("vip-")', action: 'allow' });
    const raw = path.join(dir, 'raw-rule.json');
    await fs.writeFile(raw, JSON.stringify(doc));
    const flagged = await backtestCommand(['--ruleset', raw, '--from', from, '--to', to], env());
    assert.deepEqual(flagged.notReplayable, [{ id: 'vip-users', fields: ['userId'] }]);

    // a list the logged decisions did not consult: its rule is left out, unless --use-current-lists
    const watched = JSON.parse(readFileSync(shipped, 'utf8')) as {
      version: string;
      lists: unknown[];
      rules: unknown[];
    };
    watched.version = '1.0.2-watched';
    watched.lists.push({ name: 'watched_users', key: 'userId' });
    watched.rules.push({ id: 'watched-user', when: 'in_list("watched_users", event.userId)', action: 'review' });
    const watchedFile = path.join(dir, 'watched-rule.json');
    await fs.writeFile(watchedFile, JSON.stringify(watched));
    await fs.writeFile(lists, JSON.stringify({ blocked_users: [listed], watched_users: [listed] }));
    const window = ['--from', from, '--to', to];
    const leftOut = await backtestCommand(['--ruleset', watchedFile, '--lists', lists, ...window], env());
    assert.deepEqual(leftOut.lists.notReplayed, [{ list: 'watched_users', rules: ['watched-user'], records: N }]);
    assert.equal(leftOut.rules['watched-user'], undefined);
    const today = await backtestCommand(
      ['--ruleset', watchedFile, '--lists', lists, '--use-current-lists', ...window],
      env(),
    );
    assert.deepEqual(today.lists, { recordsWithoutMemberships: 0, currentEntries: ['watched_users'], notReplayed: [] });
    assert.equal(today.rules['watched-user']?.hits, 1, "today's entry, asked for");

    // erase one user by keyed hash: their decision and labels go, nothing else
    const before = (await datasetExport(['--from', from, '--to', to, '--out', dataset], env())).rows;
    const erased = await eraseCommand(['--user', listed], env());
    assert.equal(erased.records, 1);
    assert.equal(erased.labels, 1);
    assert.equal((await datasetExport(['--from', from, '--to', to, '--out', dataset], env())).rows, before - 1);
    const all = await fs.readFile(dataset, 'utf8');
    assert.ok(!all.includes(events[0]?.event.transactionId as string));
  });
});
