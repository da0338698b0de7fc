/**
 * Under `npm start` (the local host on embedded defaults): ten scored payments are in the decision log after
 * SIGTERM (flushed on graceful shutdown), with the user id only as a keyed hash; labels are accepted and a
 * repeated call changes nothing.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import { promises as fs, readFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { within } from '../support/eventually';

const MAIN = path.resolve(__dirname, '../../local/main.js');
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
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0', DECISION_LOG_DIR: dir };
    for (const k of ['REDIS_URL', 'MODEL_DIR', 'DECISION_LOG_ENABLED', 'DECISION_LOG_HASH_KEY']) delete env[k];
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    const listening = new Promise<string>((resolve, reject) => {
      const check = (d: Buffer): void => {
        out += d.toString();
        const m = /Listening on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
      child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
    });
    const ids = Array.from({ length: 10 }, (_v, i) => `tx-log-${process.pid}-${i}`);
    try {
      const url = await within(listening, 'the "Listening on" line', 60_000);
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
      throw new Error(`${(err as Error).message}\noutput:\n${out}`);
    }
    child.kill('SIGTERM');
    const [code] = (await within(once(child, 'exit'), 'exit after SIGTERM', 30_000)) as [number | null];
    assert.equal(code, 0, out);

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
