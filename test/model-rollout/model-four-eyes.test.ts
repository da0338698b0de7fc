/**
 * `MODEL_DIRECT_ROLLOUT=false` (the Azure deployment's setting) on embedded defaults with development identities: a
 * model upload is validated but does not serve; its promote takes effect only when a second lead asks for it (the
 * first lead's request is 202 and changes nothing; the same lead again changes nothing; an analyst is refused).
 * The embedded default (direct) is what test/model-rollout/admin-api.test.ts runs.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { encodePrincipal } from '../../lib/identity/principal';
import type { Role } from '../../lib/identity/principal';
import type { ModelStatus } from '../../lib/model-rollout/model-admin';
import type { PendingAnswer } from '../../lib/rollout/four-eyes';
import { validEvent } from '../support/events';
import { startEmbeddedRollout, type EmbeddedRollout } from './support/embedded-rollout';
import { eventually } from './support/eventually';
import { manifestFor, models, writeFolderModel } from './support/models';

let rollout: EmbeddedRollout;

const as = (name: string, roles: Role[]): Record<string, string> => ({
  'content-type': 'application/json',
  'x-ms-client-principal': encodePrincipal(name, roles),
});

async function status(): Promise<ModelStatus> {
  const res = await fetch(`${rollout.api}/models/fraud`);
  return (await res.json()) as ModelStatus;
}

async function promote(name: string, roles: Role[] = ['lead']): Promise<{ status: number; json: unknown }> {
  const res = await fetch(`${rollout.api}/models/fraud/promote`, {
    method: 'POST',
    headers: as(name, roles),
    body: JSON.stringify({ version: '1.1.0' }),
  });
  return { status: res.status, json: await res.json() };
}

let scored = 0;
async function scoreVersion(): Promise<string | null> {
  const res = await fetch(`${rollout.api}/score`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
    body: JSON.stringify(validEvent({ transactionId: `tx-four-eyes-${++scored}` })),
  });
  assert.equal(res.status, 200);
  return res.headers.get('x-model-version');
}

before(async () => {
  rollout = await startEmbeddedRollout({ MODEL_DIRECT_ROLLOUT: 'false', IDENTITY_MODE: 'development' });
});
after(() => rollout.dispose());

describe('a model promotion with MODEL_DIRECT_ROLLOUT=false', () => {
  it('an upload is validated but does not serve; a promote needs a second lead', async () => {
    const bytes = await models.same();
    await writeFolderModel(rollout.folder.dir, '1.1.0', bytes, await manifestFor('1.1.0', bytes));
    const validated = await eventually(
      status,
      (s) => s.fleet.versions.some((v) => v.version === '1.1.0'),
      'the upload validated',
      60_000,
    );
    assert.equal(validated.active?.version, '1.0.0', 'the upload is not made active');
    assert.equal(await scoreVersion(), '1.0.0');

    const first = await promote('alice');
    assert.equal(first.status, 202, JSON.stringify(first.json));
    const pending = (first.json as PendingAnswer).pending;
    assert.deepEqual([pending.change, pending.version, pending.requestedBy], ['promote', '1.1.0', 'alice']);
    assert.equal((await promote('alice')).status, 202, 'the same lead again');
    const analyst = await promote('bob', ['analyst']);
    assert.equal(analyst.status, 403);
    assert.equal((await status()).active?.version, '1.0.0', 'nothing changed');

    const second = await promote('carol');
    assert.equal(second.status, 200, JSON.stringify(second.json));
    assert.equal((second.json as ModelStatus).active?.version, '1.1.0');
    assert.equal(await eventually(scoreVersion, (v) => v === '1.1.0', 'the promoted version served'), '1.1.0');
  });

  it('a promote the rollout would refuse is refused at once, never kept', async () => {
    const res = await fetch(`${rollout.api}/models/fraud/promote`, {
      method: 'POST',
      headers: as('alice', ['lead']),
      body: JSON.stringify({ version: '9.9.9' }),
    });
    assert.equal(res.status, 404);
  });
});
