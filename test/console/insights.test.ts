/**
 * The console's views: per-rule hits, precision and recall (known answers and properties), the PSI history
 * (a sample drawn from the training bins drifts nothing, a shifted one drifts above the alert), the Insights service
 * (who may ask, bad `days`, the bound on decisions read, answers kept for their TTL on the injected clock), and the
 * static files (ETag, 304, 404 outside the folder, security headers).
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import fc from 'fast-check';
import { Insights, type InsightsParts } from '../../lib/insights/insights';
import { AppError } from '../../lib/errors/errors';
import { StaticFiles } from '../../lib/http/static-files';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import type { DriftReference } from '../../lib/learning/drift-bins';
import { driftHistory } from '../../lib/learning/drift-history';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import { LabelStore } from '../../lib/learning/labels';
import { hourPrefix } from '../../lib/learning/learning-store';
import { ruleStats } from '../../lib/learning/rule-stats';

const T0 = Date.parse('2026-12-01T00:00:00Z');

function record(tx: string, rules: readonly string[], at = T0, over: Partial<DecisionRecord> = {}): DecisionRecord {
  return {
    v: 1,
    transactionId: tx,
    decidedAt: new Date(at).toISOString(),
    model: { name: 'fraud', version: '1.0.0' },
    features: { amount_log: 1 },
    velocity: EMPTY_VELOCITY,
    score: 0.5,
    decision: rules.length > 0 ? 'review' : 'approve',
    rules: rules.map((id) => ({ id, action: 'review' })),
    source: 'local',
    event: {},
    hashed: [],
    ...over,
  };
}

describe('ruleStats', () => {
  it('counts hits, labelled hits and fraud per rule; precision and recall against the labels', () => {
    const records = [
      record('a', ['r1', 'r2']),
      record('b', ['r1']),
      record('c', ['r2']),
      record('d', []),
      record('e', ['r1', 'r1']), // a rule counts once per decision
    ];
    const labels: Record<string, 0 | 1> = { a: 1, b: 0, d: 1 };
    const s = ruleStats(records, (tx) => labels[tx], ['r3']);
    assert.equal(s.decisions, 5);
    assert.equal(s.labelled, 3);
    assert.equal(s.fraud, 2);
    assert.deepEqual(
      s.rules.map((r) => [r.id, r.fired, r.labelled, r.fraud, r.precision, r.recall]),
      [
        ['r1', 3, 2, 1, 0.5, 0.5],
        ['r2', 2, 1, 1, 1, 0.5],
        ['r3', 0, 0, 0, null, 0],
      ],
    );
  });

  it('properties: precision and recall in [0, 1]; a rule firing on every decision has recall 1', () => {
    const ids = ['r1', 'r2', 'r3'];
    fc.assert(
      fc.property(
        fc.array(fc.record({ rules: fc.subarray(ids), label: fc.constantFrom<0 | 1 | undefined>(0, 1, undefined) }), {
          maxLength: 60,
        }),
        (rows) => {
          const records = rows.map((r, i) => record(`t${i}`, [...r.rules, 'all']));
          const s = ruleStats(records, (tx) => rows[Number(tx.slice(1))]?.label);
          const fraud = rows.filter((r) => r.label === 1).length;
          for (const r of s.rules) {
            assert.ok(r.fraud <= r.labelled && r.labelled <= r.fired && r.fired <= rows.length);
            if (r.precision !== null) assert.ok(r.precision >= 0 && r.precision <= 1);
            if (r.recall !== null) assert.ok(r.recall >= 0 && r.recall <= 1);
          }
          const all = s.rules.find((r) => r.id === 'all');
          if (rows.length > 0) assert.equal(all?.fired, rows.length);
          assert.equal(all?.recall ?? null, fraud === 0 ? null : 1);
        },
      ),
    );
  });
});

describe('driftHistory', () => {
  const reference: DriftReference = {
    features: [{ name: 'x', edges: [0.5], expected: [0.5, 0.5] }],
    score: { edges: [0.5], expected: [0.8, 0.2] },
  };
  const hour = 3_600_000;
  const sample = (n: number, at: number, xHigh: number, scoreHigh: number, version = '1.0.0'): DecisionRecord[] =>
    Array.from({ length: n }, (_, i) =>
      record(`${at}-${version}-${i}`, [], at + i, {
        features: { x: i < xHigh * n ? 1 : 0 },
        score: i < scoreHigh * n ? 0.9 : 0.1,
        model: { name: 'fraud', version },
      }),
    );

  it('a bucket drawn from the training bins has PSI 0; a shifted one is above the alert; too few is null', () => {
    const records = [
      ...sample(200, T0, 0.5, 0.2),
      ...sample(200, T0 + hour, 0.9, 0.7),
      ...sample(50, T0 + 2 * hour, 0.5, 0.2),
      ...sample(300, T0, 0.9, 0.9, '2.0.0'), // another version: not counted
    ];
    const points = driftHistory(records, '1.0.0', reference, { fromMs: T0, toMs: T0 + 4 * hour, bucketMs: hour });
    assert.equal(points.length, 4);
    assert.deepEqual(
      points.map((p) => p.samples),
      [200, 200, 50, 0],
    );
    assert.equal(points[0]?.score, 0);
    assert.equal(points[0]?.features['x'], 0);
    assert.ok((points[1]?.score ?? 0) > 0.2, `shifted score PSI ${points[1]?.score}`);
    assert.ok((points[1]?.features['x'] ?? 0) > 0.2, `shifted feature PSI ${points[1]?.features['x']}`);
    assert.equal(points[2]?.score, null);
    assert.equal(points[0]?.start, new Date(T0).toISOString());
  });
});

describe('Insights', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-insights-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  const lead = { get: (k: string) => (k === 'x-ms-client-principal' ? encodePrincipal('lee', ['lead']) : null) };
  const q = (days?: string) => ({ get: (k: string) => (k === 'days' ? (days ?? null) : null) });

  async function setUp(mode: 'development' | 'disabled' = 'development', maxRecords = 1000) {
    const store = new FolderLearningStore(path.join(dir, `${mode}-${maxRecords}`));
    const now = T0 + 10 * 3_600_000;
    for (let h = 0; h < 3; h++) {
      const lines = [0, 1].map((i) => JSON.stringify(record(`h${h}-${i}`, ['r1'], T0 + h * 3_600_000 + i)));
      await store.append(`${hourPrefix(T0 + h * 3_600_000)}w.jsonl`, `${lines.join('\n')}\n`);
    }
    await new LabelStore(store, () => now).add([
      { transactionId: 'h0-0', label: 'fraud', reportedAt: '2026-12-01T01:00:00Z' },
    ]);
    let reads = 0;
    const counted = new Proxy(store, {
      get: (t, k) => (k === 'read' ? (name: string) => (reads++, t.read(name)) : Reflect.get(t, k)),
    });
    let mono = 1_000; // lru-cache reads a start of 0 as "no TTL": the clock starts later, as performance.now() does
    const parts: InsightsParts = {
      identity: new Identity({ mode, devActor: { name: 'dev', roles: ['analyst'] } }),
      store: counted,
      wallClock: () => now,
      monotonic: () => mono,
      model: () => undefined,
      ruleIds: () => ['r1', 'r9'],
      ruleset: () => undefined,
      serving: () => Promise.resolve({ models: [], rulesets: [] }),
      maxRecords,
      ttlMs: 60_000,
    };
    return { insights: new Insights(parts), reads: () => reads, advance: (ms: number) => (mono += ms) };
  }

  it('reports each rule over the window, keeps the answer for its TTL on the injected clock', async () => {
    const { insights, reads, advance } = await setUp();
    const r = await insights.rules(lead, q('1'));
    assert.equal(r.decisions, 6);
    assert.equal(r.truncated, false);
    assert.deepEqual(
      r.rules.map((x) => [x.id, x.fired, x.fraud, x.precision, x.recall]),
      [
        ['r1', 6, 1, 1, 1],
        ['r9', 0, 0, null, 0],
      ],
    );
    const before = reads();
    await insights.rules(lead, q('1'));
    assert.equal(reads(), before, 'kept: nothing read again within the TTL');
    advance(60_001);
    await insights.rules(lead, q('1'));
    assert.ok(reads() > before, 'read again after the TTL');
  });

  it('reads at most maxRecords decisions, newest first, and says so', async () => {
    const { insights } = await setUp('development', 2);
    const r = await insights.rules(lead, q('1'));
    assert.equal(r.truncated, true);
    assert.equal(r.decisions, 2);
  });

  it('refuses bad days naming the field, and everyone when the identity is disabled', async () => {
    const { insights } = await setUp();
    for (const days of ['0', '31', '1.5', 'x'])
      await assert.rejects(insights.rules(lead, q(days)), (e: AppError) => {
        assert.equal(e.code, 'validation_failed');
        assert.deepEqual(
          e.errors?.map((f) => f.path),
          ['days'],
        );
        return true;
      });
    const off = await setUp('disabled');
    await assert.rejects(off.insights.drift(lead, q()), (e: AppError) => e.code === 'forbidden');
    await assert.rejects(off.insights.serving(lead), (e: AppError) => e.code === 'forbidden');
  });

  it('drift without a model says why', async () => {
    const { insights } = await setUp();
    const d = await insights.drift(lead, q('2'));
    assert.equal(d.bucket, 'hour');
    assert.deepEqual(d.points, []);
    assert.equal(d.note, 'No model is serving.');
    assert.equal(d.minSamples, 100, 'the fewest payments a bucket needs, for the page to say why it is empty');
  });
});

describe('StaticFiles', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-static-'));
  after(() => rmSync(dir, { recursive: true, force: true }));
  writeFileSync(path.join(dir, 'index.html'), '<!doctype html><title>x</title>');
  writeFileSync(path.join(dir, 'main.js'), 'export {};');
  writeFileSync(path.join(dir, 'secret.txt'), 'not served: unknown type');

  it('serves the index and files with their type, ETag and security headers; 304 on a match; 404 otherwise', async () => {
    const files = await StaticFiles.create(dir);
    const index = files.get(undefined, null);
    assert.equal(index.status, 200);
    assert.equal(index.headers['content-type'], 'text/html; charset=utf-8');
    assert.match(index.headers['content-security-policy'] ?? '', /script-src 'self'/);
    assert.equal(index.headers['x-content-type-options'], 'nosniff');
    const js = files.get('main.js', null);
    assert.equal(js.body?.toString(), 'export {};');
    assert.equal(files.get('main.js', `"other", ${js.headers['etag']}`).status, 304);
    for (const bad of ['../index.html', 'secret.txt', '.hidden', 'a/b.js', 'missing.js'])
      assert.equal(files.get(bad, null).status, 404, bad);
  });

  it('refuses a folder over its limits', async () => {
    await assert.rejects(StaticFiles.create(dir, { maxFiles: 1, maxBytes: 1 << 20 }), /more than 1 files/);
  });
});
