/**
 * Under `npm start` (the local host on embedded defaults): ten scored payments are in the decision log after
 * SIGTERM (flushed on graceful shutdown), with the user id only as a keyed hash; labels are accepted and a
 * repeated call changes nothing.
 */
import assert from 'node:assert/strict';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { stopChild } from '../support/child-process';
import { startLocalHost } from '../support/local-host';

const EXAMPLE = JSON.parse(readFileSync(path.resolve(__dirname, '../../../examples/payment.json'), 'utf8')) as Record<
  string,
  unknown
>;

async function filesUnder(dir: string): Promise<string[]> {
  const out: string[] = [];
  for (const e of await fs.readdir(dir, { withFileTypes: true }).catch(() => [])) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) out.push(...(await filesUnder(p)));
    else out.push(p);
  }
  return out;
}

describe('decision log under npm start', () => {
  it('holds the ten scored payments after SIGTERM, never the raw user id; labels are idempotent', async () => {
    const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'decisions-'));
    const { child, url, output } = await startLocalHost({
      set: { DECISION_LOG_DIR: dir },
      unset: ['DECISION_LOG_ENABLED', 'DECISION_LOG_HASH_KEY'],
    });
    const ids = Array.from({ length: 10 }, (_v, i) => `tx-log-${process.pid}-${i}`);
    try {
      for (const transactionId of ids) {
        const res = await fetch(`${url}/score`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify({ ...EXAMPLE, transactionId, note: 'never-logged-note' }),
        });
        assert.equal(res.status, 200, await res.text());
      }
      const labels = {
        labels: [
          { transactionId: ids[0], label: 'fraud', reportedAt: '2026-12-01T10:00:00Z', source: 'analyst' },
          { transactionId: ids[1], label: 'chargeback', reportedAt: '2026-12-01T10:00:00Z' },
          { transactionId: 'tx-not-logged-yet', label: 'legit', reportedAt: '2026-12-01T10:00:00Z' },
        ],
      };
      const post = async (): Promise<{ status: number; body: unknown }> => {
        const r = await fetch(`${url}/labels`, {
          method: 'POST',
          headers: { 'content-type': 'application/json' },
          body: JSON.stringify(labels),
        });
        return { status: r.status, body: await r.json() };
      };
      assert.deepEqual(await post(), { status: 200, body: { accepted: 3, duplicates: 0 } });
      const labelFiles = async (): Promise<string[]> =>
        Promise.all((await filesUnder(path.join(dir, 'labels'))).sort().map((f) => fs.readFile(f, 'utf8')));
      const before = await labelFiles();
      assert.equal(before.length, 3);
      assert.deepEqual(await post(), { status: 200, body: { accepted: 0, duplicates: 3 } });
      assert.deepEqual(await labelFiles(), before, 'a repeated call changes nothing');
      const bad = await fetch(`${url}/labels`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ labels: [{ transactionId: 'x', label: 'maybe', reportedAt: 'yesterday', extra: 1 }] }),
      });
      assert.equal(bad.status, 400);
      const problem = (await bad.json()) as { errors: { path: string }[] };
      assert.deepEqual(problem.errors.map((e) => e.path).sort(), [
        'labels.0.extra',
        'labels.0.label',
        'labels.0.reportedAt',
      ]);
    } catch (err) {
      child.kill('SIGKILL');
      throw new Error(`${(err as Error).message}\noutput:\n${output()}`);
    }
    const code = await stopChild(child, 'npm start to exit after SIGTERM');
    assert.equal(code, 0, output());

    const logs = (await filesUnder(path.join(dir, 'decisions'))).filter((f) => f.endsWith('.jsonl'));
    const text = (await Promise.all(logs.map((f) => fs.readFile(f, 'utf8')))).join('');
    const records = text
      .split('\n')
      .filter((l) => l !== '')
      .map((l) => JSON.parse(l) as { transactionId: string; event: Record<string, unknown>; hashed: string[] });
    assert.deepEqual(records.map((r) => r.transactionId).sort(), [...ids].sort());
    for (const field of ['user-42', 'device-abc', 'sess-7f3a', 'never-logged-note'])
      assert.ok(!text.includes(field), `the log never holds ${field}`);
    const first = records[0];
    assert.match(String(first?.event['userId']), /^h_[0-9a-f]{32}$/);
    assert.deepEqual(first?.hashed, ['userId', 'sessionId', 'deviceId']);
    assert.equal(first?.event['amount'], EXAMPLE['amount']);
    await fs.rm(dir, { recursive: true, force: true });
  });
});
