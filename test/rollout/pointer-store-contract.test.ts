/**
 * One contract for the one pointer store of every artifact kind, run against both implementations: in process
 * (kept in a JSON file in a temp dir) and Redis (real Redis, own key prefix, cleaned up). The state here is a
 * minimal kind of its own; the model and ruleset kinds run their transitions on the same stores.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { JsonFileMap } from '../../lib/persistence/json-file-map';
import { MAX_REJECTIONS, MemoryPointerStore, type PointerStore, type Rejection } from '../../lib/rollout/pointer-store';
import { RedisPointerStore } from '../../lib/rollout/redis-pointer-store';
import { redisPair, storePair, until } from '../support/store-pair';

interface TestState {
  readonly generation: number;
  readonly active: string;
  readonly previous: readonly string[];
}

/** Makes `version` active, keeping the one before; the same version changes nothing. */
const activate =
  (version: string) =>
  (cur: TestState | undefined): TestState | undefined =>
    cur?.active === version
      ? undefined
      : { generation: -1, active: version, previous: cur === undefined ? [] : [cur.active, ...cur.previous] };

const rejection = (i: number): Rejection => ({
  name: 'fraud',
  version: `2.0.${i}`,
  blobPath: `kind/fraud/2.0.${i}`,
  check: 'validate',
  code: 'validation_failed',
  reason: 'x',
  errors: [],
  by: 'i1',
  at: '2026-11-30T00:00:00.000Z',
});

/** `store` and `other` are two instances' views of the same pointers (the same object in process). */
function contract(
  name: string,
  make: () => Promise<{
    store: PointerStore<TestState>;
    other: PointerStore<TestState>;
    cleanup: () => Promise<void>;
  }>,
): void {
  describe(`pointer store contract: ${name}`, () => {
    const heard: [string, number][] = [];
    const pair = storePair(make, async (p) => {
      assert.equal(await p.other.subscribe((n, g) => heard.push([n, g])), true);
    });
    it('stores a change atomically, sets its generation and announces it to every subscriber', async () => {
      const { store, other } = pair();
      assert.equal(await store.read('fraud'), undefined);
      const u = await store.update('fraud', activate('1.0.0'));
      assert.deepEqual(u, { state: { generation: 1, active: '1.0.0', previous: [] }, changed: true });
      assert.deepEqual(await other.read('fraud'), u.state);
      await until(() => heard.some(([n, g]) => n === 'fraud' && g === 1), 'the change announced to the other instance');
    });

    it('writes and announces nothing for an unchanged result', async () => {
      const { store } = pair();
      const count = heard.length;
      const u = await store.update('fraud', activate('1.0.0'));
      assert.equal(u.changed, false);
      assert.equal(u.state?.generation, 1);
      // announcements travel in order: once the sentinel's is heard, one of the no-op would have been too
      const s = await store.update('sentinel', activate('1.0.0'));
      await until(() => heard.some(([n]) => n === 'sentinel'), 'the sentinel announcement');
      assert.deepEqual(heard.slice(count), [['sentinel', s.state?.generation]]);
    });

    it("propagates the transition's error and leaves the state as it was", async () => {
      const { store } = pair();
      const before = await store.read('fraud');
      await assert.rejects(
        store.update('fraud', () => {
          throw new AppError('conflict', 'refused by the kind');
        }),
        (e) => e instanceof AppError && e.code === 'conflict',
      );
      assert.deepEqual(await store.read('fraud'), before);
    });

    it('loses no update when two instances change the pointer at once', async () => {
      const { store, other } = pair();
      const before = (await store.read('fraud')) as TestState;
      await Promise.all([store.update('fraud', activate('1.1.0')), other.update('fraud', activate('1.2.0'))]);
      const after = (await store.read('fraud')) as TestState;
      assert.equal(after.generation, before.generation + 2);
      assert.deepEqual([after.active, ...after.previous].slice(0, 3).sort(), ['1.0.0', '1.1.0', '1.2.0']);
    });

    it('keeps the last rejections, newest first, bounded, per name', async () => {
      const { store, other } = pair();
      for (let i = 0; i < MAX_REJECTIONS + 3; i++) await store.recordRejection(rejection(i));
      const list = await other.rejections('fraud');
      assert.equal(list.length, MAX_REJECTIONS);
      assert.deepEqual(list[0], rejection(MAX_REJECTIONS + 2));
      assert.deepEqual(await other.rejections('sentinel'), []);
    });
  });
}

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

contract('in-process, kept in a file', async () => {
  const dir = mkdtempSync(path.join(os.tmpdir(), 'pointer-contract-'));
  dirs.push(dir);
  const store = new MemoryPointerStore<TestState>(new JsonFileMap(path.join(dir, 'test.json')));
  return { store, other: store, cleanup: () => Promise.resolve() };
});

contract('redis', () => redisPair((r, prefix) => new RedisPointerStore<TestState>(r, prefix, 'test')));

describe('in-process pointer store kept in a file', () => {
  it('serves the kept pointer after a restart, in the current format', async () => {
    const dir = mkdtempSync(path.join(os.tmpdir(), 'pointer-restart-'));
    dirs.push(dir);
    const file = path.join(dir, 'test.json');
    const first = new MemoryPointerStore<TestState>(new JsonFileMap(file));
    await first.update('fraud', activate('1.0.0'));
    await first.update('fraud', activate('1.1.0'));
    await first.dispose();
    const parse = (text: string): TestState => ({ ...(JSON.parse(text) as TestState), previous: ['migrated'] });
    const again = new MemoryPointerStore<TestState>(new JsonFileMap(file), parse);
    assert.deepEqual(await again.read('fraud'), { generation: 2, active: '1.1.0', previous: ['migrated'] });
    assert.equal(again.description, `in-process, kept in ${file}`);
  });
});
