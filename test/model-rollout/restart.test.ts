/**
 * Embedded defaults (no Redis) as `npm start` runs them: the model and ruleset pointers are kept in
 * `ROLLOUT_STATE_DIR`, so a rollback or a promote survives a restart, as it does on Redis.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { eventually } from '../support/eventually';
import { validEvent } from '../support/events';
import { stopChild } from '../support/child-process';
import { startLocalHost, type LocalHost } from '../support/local-host';
import { bundledBytes, copyBundled, manifestFor, writeFolderModel } from './support/models';

const SHIPPED = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');
let folder: Awaited<ReturnType<typeof copyBundled>>;
let stateDir: string;
let tx = 0;

async function versions(api: string): Promise<{ model: string | null; ruleset: string | null }> {
  const res = await fetch(`${api}/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
    body: JSON.stringify(validEvent({ transactionId: `tx-restart-${++tx}` })),
  });
  assert.equal(res.status, 200);
  return { model: res.headers.get('x-model-version'), ruleset: res.headers.get('x-ruleset-version') };
}

async function post(api: string, route: string, body?: unknown): Promise<string> {
  const res = await fetch(`${api}${route}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
  return `${res.status} ${await res.text()}`;
}

const start = (): Promise<LocalHost> =>
  startLocalHost({
    set: { MODEL_DIR: folder.dir, ROLLOUT_STATE_DIR: stateDir, CASE_STORE: 'none', LOG_LEVEL: 'error' },
    ms: 120_000,
  });

before(async () => {
  folder = await copyBundled();
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'restart-rollout-'));
  const shipped = JSON.parse(await fs.readFile(SHIPPED, 'utf8')) as Record<string, unknown>;
  await fs.mkdir(path.join(folder.dir, 'rulesets', 'fraud-rules'), { recursive: true });
  await fs.writeFile(
    path.join(folder.dir, 'rulesets', 'fraud-rules', '1.1.0.json'),
    JSON.stringify({ ...shipped, version: '1.1.0' }),
  );
});
after(async () => {
  await folder.remove();
  await fs.rm(stateDir, { recursive: true, force: true });
});

describe('rollout state across a restart on embedded defaults', () => {
  it('a model rollback and a ruleset promote still hold after a restart', async () => {
    const first = await start();
    try {
      assert.deepEqual(await versions(first.url), { model: '1.0.0', ruleset: '1.0.0' });
      // an upload: the blob feeder fires the trigger, and 1.1.0 is published with 1.0.0 as its previous version
      const bytes = await bundledBytes();
      await writeFolderModel(folder.dir, '1.1.0', bytes, await manifestFor('1.1.0', bytes));
      await eventually(
        () => versions(first.url),
        (v) => v.model === '1.1.0',
        'the uploaded model 1.1.0 to serve',
        60_000,
      );
      assert.match(await post(first.url, '/models/fraud/rollback'), /^200 /);
      assert.match(await post(first.url, '/rulesets/fraud-rules/promote', { version: '1.1.0' }), /^200 /);
      assert.deepEqual(await versions(first.url), { model: '1.0.0', ruleset: '1.1.0' });
    } finally {
      await stopChild(first.child, 'the first host');
    }
    const files = await fs.readdir(stateDir);
    assert.deepEqual(files.sort(), ['models.json', 'rulesets.json']);
    const second = await start();
    try {
      assert.deepEqual(
        await versions(second.url),
        { model: '1.0.0', ruleset: '1.1.0' },
        'the rolled-back state serves',
      );
    } finally {
      await stopChild(second.child, 'the second host');
    }
  });
});
