/**
 * Signals rollout against Azurite (blob container `models`, prefix `features/`) and real Redis: two instances share
 * the pointer; an upload validated on one swaps both; a candidate's canary routes each user to the same version on
 * both instances; the container's reads are capped and a missing version is `not_found`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ContainerClient } from '@azure/storage-blob';
import { AppError } from '../../lib/errors/errors';
import { RedisPointerStore } from '../../lib/rollout/redis-pointer-store';
import { compileSignals } from '../../lib/signals/compile-signals';
import { MAX_SIGNALS_BYTES } from '../../lib/signals/signals-document';
import { blobSignalsRepository, signalsBlobName } from '../../lib/signals/signals-repository';
import { SignalsRollout } from '../../lib/signals/signals-rollout';
import { SignalsServing } from '../../lib/signals/signals-serving';
import { parseSignalsState, SIGNALS_TRAFFIC } from '../../lib/signals/signals-traffic';
import { eventually } from '../support/eventually';
import { testRedis } from '../support/redis';
import { startAzurite, type Azurite } from '../model-rollout/support/azurite';
import { CARD_USERS, signalsDoc } from './support';

const noTimers = { setTimeout: () => 0, clearTimeout: () => undefined };

describe('signals rollout (Azurite + Redis, two instances)', () => {
  const r = testRedis();
  let azurite: Azurite;
  let container: ContainerClient;
  const rollouts: SignalsRollout[] = [];
  const clients: { disconnect(): void }[] = [];

  function instance(): { rollout: SignalsRollout; serving: SignalsServing } {
    const client = r.redis.duplicate();
    clients.push(client);
    const serving = new SignalsServing(compileSignals(signalsDoc('1.0.0')));
    const rollout = new SignalsRollout({
      name: 'default',
      serving,
      store: new RedisPointerStore(client, r.prefix, 'signals', parseSignalsState),
      repository: blobSignalsRepository(container),
      requirements: () => [],
      timers: noTimers, // pub/sub only: no reconcile tick in this test
      reconcileMs: 60_000,
    });
    rollouts.push(rollout);
    return { rollout, serving };
  }

  async function upload(
    doc: Record<string, unknown> | string,
    version = String((doc as { version?: unknown }).version),
  ) {
    const text = typeof doc === 'string' ? doc : JSON.stringify(doc);
    const name = signalsBlobName('default', version);
    await container.getBlockBlobClient(name).upload(text, Buffer.byteLength(text));
    return `models/${name}`;
  }

  before(async () => {
    azurite = await startAzurite();
    container = await azurite.container('models');
  });
  after(async () => {
    for (const x of rollouts) await x.dispose();
    for (const c of clients) c.disconnect();
    await azurite.stop();
    await r.cleanup();
  });

  it('an upload read from the container on one instance swaps both; the canary splits users alike on both', async () => {
    const a = instance();
    const b = instance();
    await a.rollout.start();
    await b.rollout.start();
    const blobPath = await upload(signalsDoc('1.1.0', { aggregates: [CARD_USERS] }));
    const o = await a.rollout.handleUpload({ blobPath }); // by reference: read from the container
    assert.equal(o.kind, 'published');
    await eventually(
      () => Promise.resolve(b.serving.active?.version),
      (v) => v === '1.1.0',
      'instance B to swap to 1.1.0',
      10_000,
    );

    await upload(
      signalsDoc('1.2.0', { aggregates: [CARD_USERS, { ...CARD_USERS, name: 'card_users_24h', window: '24h' }] }),
    );
    await a.rollout.traffic('default', { candidate: '1.2.0', canaryPercent: 40 });
    await eventually(
      () => Promise.resolve(b.serving.candidate?.version),
      (v) => v === '1.2.0',
      'instance B to load the candidate',
      10_000,
    );
    for (let i = 0; i < 50; i++) {
      const user = `user-${i}`;
      const want = SIGNALS_TRAFFIC.inCanary(user, 40) ? '1.2.0' : '1.1.0';
      assert.equal(a.serving.forUser(user)?.version, want);
      assert.equal(b.serving.forUser(user)?.version, want);
    }
    assert.equal(b.serving.current.plan.aggregates.length, 2, 'the union of both versions');
  });

  it('the container read is capped and a missing version is not_found', async () => {
    const repo = blobSignalsRepository(container);
    await upload(' '.repeat(MAX_SIGNALS_BYTES + 1), '3.0.0');
    await assert.rejects(repo.read('default', '3.0.0'), (e) => e instanceof AppError && e.code === 'payload_too_large');
    await assert.rejects(repo.read('default', '9.9.9'), (e) => e instanceof AppError && e.code === 'not_found');
    assert.deepEqual(await repo.versions('default'), ['1.1.0', '1.2.0', '3.0.0']);
  });
});
