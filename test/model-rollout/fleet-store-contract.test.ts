/** One contract for both fleet stores: in-process and Redis (real Redis, own key prefix, cleaned up). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { publishVersion, type FleetState, type VersionRecord } from '../../lib/model-rollout/fleet-state';
import { MAX_REJECTIONS, memoryFleetStore, type FleetStore, type Rejection } from '../../lib/model-rollout/fleet-store';
import { redisFleetStore } from '../../lib/model-rollout/redis-fleet-reports';
import { emptyCounts } from '../../lib/model-rollout/shadow-stats';
import { bundledManifest } from '../support/models';
import { redisPair, storePair, until } from '../support/store-pair';

const actor = { by: 'i1', at: '2026-11-30T00:00:00.000Z' };

async function rec(version: string, name = 'fraud'): Promise<VersionRecord> {
  return {
    pointer: {
      name,
      version,
      blobPath: `models/${name}/${version}.onnx`,
      sha256: `sha-${version}`,
      source: 'repository',
      publishedBy: 'i1',
      publishedAt: actor.at,
    },
    manifest: { ...(await bundledManifest()), name, version },
  };
}

/** `store` and `other` are two instances' views of the same fleet (the same object for the in-process store). */
function contract(
  name: string,
  make: () => Promise<{ store: FleetStore; other: FleetStore; cleanup: () => Promise<void> }>,
): void {
  describe(`fleet store contract: ${name}`, () => {
    const heard: [string, number][] = [];
    let baseline: VersionRecord;
    const pair = storePair(make, async (p) => {
      baseline = await rec('1.0.0');
      assert.equal(await p.other.subscribe((n, g) => heard.push([n, g])), true);
    });
    it('stores a change atomically and announces it to every subscriber', async () => {
      const { store, other } = pair();
      assert.equal(await store.read('fraud'), undefined);
      const r = await rec('1.1.0');
      const t = await store.update('fraud', (cur) => publishVersion(cur, r, { mode: 'active', baseline, ...actor }));
      assert.equal(t.changed, true);
      assert.deepEqual(await other.read('fraud'), t.state);
      await until(() => heard.some(([n, g]) => n === 'fraud' && g === 1), 'the change announced to the other instance');
    });

    it('writes and announces nothing for an unchanged result', async () => {
      const { store } = pair();
      const before = (await store.read('fraud')) as FleetState;
      const count = heard.length;
      const r = await rec('1.1.0');
      const t = await store.update('fraud', (cur) => publishVersion(cur, r, { mode: 'active', ...actor }));
      assert.equal(t.changed, false);
      assert.equal((await store.read('fraud'))?.generation, before.generation);
      // a sentinel change after the unchanged one: announcements travel in order (one channel, one
      // subscriber), so once the sentinel is heard, an announcement of the unchanged update would have been too
      const [base, sentinel] = [await rec('1.0.0', 'sentinel'), await rec('1.0.1', 'sentinel')];
      const s = await store.update('sentinel', (cur) =>
        publishVersion(cur, sentinel, { mode: 'active', baseline: base, ...actor }),
      );
      assert.equal(s.changed, true);
      await until(() => heard.some(([n]) => n === 'sentinel'), 'the sentinel announcement');
      assert.deepEqual(heard.slice(count), [['sentinel', s.state.generation]]);
    });

    it("propagates the transition's error and leaves the state as it was", async () => {
      const { store } = pair();
      const before = await store.read('fraud');
      const older = await rec('1.0.5');
      await assert.rejects(
        store.update('fraud', (cur) => publishVersion(cur, older, { mode: 'active', ...actor })),
        (e) => e instanceof AppError && e.code === 'model_invalid',
      );
      assert.deepEqual(await store.read('fraud'), before);
    });

    it('loses no update when two instances change the pointer at once', async () => {
      const { store, other } = pair();
      const before = (await store.read('fraud')) as FleetState;
      const [a, b] = [await rec('1.2.0'), await rec('1.3.0')];
      await Promise.all([
        store.update('fraud', (cur) => publishVersion(cur, a, { mode: 'candidate', ...actor })),
        other.update('fraud', (cur) => publishVersion(cur, b, { mode: 'candidate', ...actor })),
      ]);
      const after = (await store.read('fraud')) as FleetState;
      assert.equal(after.generation, before.generation + 2);
      assert.ok(
        after.versions['1.2.0'] !== undefined && after.versions['1.3.0'] !== undefined,
        'both publishes survived',
      );
    });

    it('keeps the last rejections, newest first, bounded', async () => {
      const { store, other } = pair();
      for (let i = 0; i < MAX_REJECTIONS + 3; i++) {
        const r: Rejection = {
          name: 'fraud',
          version: `2.0.${i}`,
          blobPath: `models/fraud/2.0.${i}.onnx`,
          check: 'sha256',
          code: 'model_invalid',
          reason: 'x',
          errors: [],
          by: 'i1',
          at: actor.at,
        };
        await store.recordRejection(r);
      }
      const list = await other.rejections('fraud');
      assert.equal(list.length, MAX_REJECTIONS);
      assert.equal(list[0]?.version, `2.0.${MAX_REJECTIONS + 2}`);
    });

    it('lists instance reports newer than a time, pruning older ones', async () => {
      const { store, other } = pair();
      const base = { name: 'fraud', activeVersion: '1.1.0', candidateVersion: undefined, generation: 3, stale: false };
      await store.reportInstance({ ...base, instanceId: 'a', reportedAtMs: 1000 });
      await other.reportInstance({
        ...base,
        instanceId: 'b',
        reportedAtMs: 5000,
        stale: true,
        desiredVersion: '1.2.0',
        staleReason: 'download failed',
      });
      assert.deepEqual(
        (await store.instances('fraud', 2000)).map((r) => [r.instanceId, r.stale]),
        [['b', true]],
      );
      assert.deepEqual(
        (await store.instances('fraud', 0)).map((r) => r.instanceId),
        ['b'],
        'a was pruned',
      );
    });

    it('adds shadow counts from several instances', async () => {
      const { store, other } = pair();
      const d = emptyCounts('1.1.0', '1.2.0');
      d.n = 2;
      d.sumActive = 0.5;
      d.sumAbsDiff = 0.25;
      d.activeBins[2] = 2;
      d.candidateBins[4] = 2;
      await store.addShadow('fraud', d);
      await other.addShadow('fraud', d);
      const c = await store.shadow('fraud', '1.1.0', '1.2.0');
      assert.equal(c?.n, 4);
      assert.equal(c?.activeBins[2], 4);
      assert.equal(c?.candidateBins[4], 4);
      assert.ok(Math.abs((c?.sumAbsDiff ?? 0) - 0.5) < 1e-9);
      assert.equal(await store.shadow('fraud', '1.1.0', '9.9.9'), undefined);
    });
  });
}

contract('in-process', async () => {
  const store = memoryFleetStore();
  return { store, other: store, cleanup: () => Promise.resolve() };
});

contract('redis', () => redisPair((r, prefix) => redisFleetStore(r, prefix)));
