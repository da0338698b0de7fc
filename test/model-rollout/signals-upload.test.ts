/**
 * The embedded default (no Redis, no storage account) as `npm start` runs it: the models folder plays the container,
 * and the local host feeds the signals blob trigger (`%SIGNALS_CONTAINER%/features/{name}/{version}.json`) by its
 * declared path, as Event Grid does in Azure. A signals document copied to `{models}/features/default/{version}.json`
 * rolls out and `GET /api/signals/default` reports it active; one that lacks a feature the served model reads is
 * refused, listed naming the model and the feature, and the previous version keeps serving.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { SignalsStatus } from '../../lib/signals/signals-rollout';
import { CARD_USERS, signalsDoc } from '../signals/support';
import { startEmbeddedRollout, type EmbeddedRollout } from './support/embedded-rollout';
import { eventually } from './support/eventually';

let rollout: EmbeddedRollout;

/** Writes a signals document where an upload lands: `{models}/features/default/{version}.json`. */
async function upload(doc: Record<string, unknown>): Promise<void> {
  const dir = path.join(rollout.folder.dir, 'features', 'default');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, `${String(doc['version'])}.json`), JSON.stringify(doc));
}

const status = async (): Promise<SignalsStatus> => {
  const res = await fetch(`${rollout.api}/signals/default`);
  assert.equal(res.status, 200);
  return (await res.json()) as SignalsStatus;
};

before(async () => {
  rollout = await startEmbeddedRollout();
});
after(() => rollout.dispose());

describe('a signals upload on embedded defaults', () => {
  it('a version copied into the models folder becomes active; one lacking a model feature is refused and listed', async () => {
    await upload(signalsDoc('1.1.0', { aggregates: [CARD_USERS] }));
    const active = await eventually(status, (s) => s.active?.version === '1.1.0', 'signals 1.1.0 active', 30_000);
    assert.equal(active.serving, '1.1.0');

    await upload(signalsDoc('1.2.0', { features: [{ name: 'amount_log', builtin: 'amount_log' }] }));
    const refused = await eventually(
      status,
      (s) => s.rejections.some((r) => r.version === '1.2.0'),
      'the rejection of 1.2.0 to be recorded',
      30_000,
    );
    const r = refused.rejections.find((x) => x.version === '1.2.0');
    assert.equal(r?.check, 'compatibility');
    assert.equal(r?.code, 'signals_invalid');
    assert.ok(
      r?.errors.some((e) => e.path === 'signals.velocity_1h' && /^model fraud \d+\.\d+\.\d+ reads it$/.test(e.message)),
      JSON.stringify(r?.errors),
    );
    assert.deepEqual(
      [refused.serving, refused.active?.version],
      ['1.1.0', '1.1.0'],
      'the previous version keeps serving',
    );

    const ready = (await (await fetch(`${rollout.api}/health/ready`)).json()) as { waitingFor?: unknown[] };
    assert.equal(ready.waitingFor, undefined, 'readiness waits for no signals version');
  });
});
