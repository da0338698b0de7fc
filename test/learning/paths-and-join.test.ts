/**
 * The decision log records HTTP, batch and Service Bus decisions alike (a redelivery is not logged twice), with
 * the ruleset that decided; a label that arrives before its decision is kept and joined by a later export.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import { InProcessBus } from '../../local/in-process-bus';
import { loadConfig } from '../../lib/config/config';
import { readDecisions } from '../../lib/learning/decision-reader';
import { exportDataset } from '../../lib/learning/dataset';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { LabelStore } from '../../lib/learning/labels';
import { silentLogger } from '../../lib/platform/logger';
import { validEvent } from '../support/events';

describe('decision log paths and label join', () => {
  it('logs HTTP, batch and Service Bus decisions once each, with the ruleset and profile', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'paths-'));
    const config = loadConfig({ DECISION_LOG_DIR: dir, INFERENCE_MODE: 'inline', REQUEST_DEADLINE_MS: '5000' });
    const engine = await createEngine(config, { logger: silentLogger, bus: new InProcessBus() });
    try {
      await engine.start();
      await engine.score(validEvent({ transactionId: 'tx-http', userId: 'u-paths-1' }));
      await engine.scoreBatch({ events: [validEvent({ transactionId: 'tx-batch', userId: 'u-paths-2' })] });
      const body = Buffer.from(JSON.stringify(validEvent({ transactionId: 'tx-sb', userId: 'u-paths-3' })));
      const first = await engine.processMessage(body, { messageId: 'tx-sb', deliveryCount: 1 });
      assert.equal(first.kind, 'scored');
      await engine.processMessage(body, { messageId: 'tx-sb', deliveryCount: 2 }); // a redelivery
    } finally {
      await engine.dispose();
    }
    const store = new FolderLearningStore(dir);
    const all = (await store.list('decisions/')).length;
    assert.ok(all >= 1);
    const records = await readDecisions(store, Date.now() - 3_600_000, Date.now() + 3_600_000);
    assert.deepEqual(records.map((r) => r.transactionId).sort(), ['tx-batch', 'tx-http', 'tx-sb']);
    const text = (await Promise.all((await store.list('decisions/')).map((n) => store.read(n)))).join('');
    assert.equal(text.split('\n').filter((l) => l.includes('"tx-sb"')).length, 1, 'the redelivery is not logged again');
    for (const r of records) {
      assert.equal(r.ruleset?.name, 'fraud-rules', 'the shipped ruleset decided');
      assert.equal(typeof r.profile?.id, 'string');
      assert.equal(Object.keys(r.features).length, 17);
      assert.ok(!JSON.stringify(r).includes('u-paths'), 'no raw user id');
    }
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('keeps a label whose decision is not logged yet, and joins it once the decision is there', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'join-'));
    const store = new FolderLearningStore(dir);
    await new LabelStore(store).add([
      { transactionId: 'tx-late', label: 'chargeback', reportedAt: '2026-12-01T00:00:00Z' },
    ]);
    const from = Date.parse('2026-12-01T00:00:00Z');
    const to = Date.parse('2026-12-02T00:00:00Z');
    const early = await exportDataset(store, from, to);
    assert.deepEqual(early.stats, { decisions: 0, labelled: 0, positives: 0, labelsWithoutDecision: 1 });
    const record = {
      v: 1,
      transactionId: 'tx-late',
      decidedAt: '2026-12-01T10:00:00.000Z',
      model: { name: 'fraud', version: '1.0.0' },
      features: { amount_log: 3 },
      velocity: { count1m: 0, count1h: 0, count24h: 0, sum24h: 0, distinctCountries24h: 0 },
      score: 0.2,
      decision: 'review',
      rules: [],
      source: 'local',
      event: { transactionId: 'tx-late' },
      hashed: [],
    };
    await store.append('decisions/2026/12/01/10/w.jsonl', `${JSON.stringify(record)}\n`);
    const later = await exportDataset(store, from, to);
    assert.equal(later.rows.length, 1);
    assert.equal(later.rows[0]?.label, 1);
    assert.deepEqual(later.rows[0]?.labels, ['chargeback']);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
