/**
 * Ruleset rollout against Azurite (blob container `models`, prefix `rulesets/`) and real Redis: two instances
 * share the pointer; an upload validated on one swaps both; a ruleset that does not compile is rejected naming
 * the rule id and the previous one keeps serving; rollback, promote, shadow (changed decisions by direction) and
 * a canary that routes each user to the same version on both instances.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { ContainerClient } from '@azure/storage-blob';
import { Decisioning } from '../../lib/decisioning/decisioning';
import { ListLookup } from '../../lib/decisioning/list-lookup';
import { MemoryListStore } from '../../lib/decisioning/list-store';
import { loadRuleset } from '../../lib/decisioning/load-ruleset';
import { blobRulesetRepository, rulesetBlobName } from '../../lib/decisioning/ruleset-repository';
import { GOLDEN_THRESHOLDS, RulesetRollout } from '../../lib/decisioning/ruleset-rollout';
import { inRulesetCanary, parseRulesetState } from '../../lib/decisioning/ruleset-traffic';
import { RedisPointerStore } from '../../lib/rollout/redis-pointer-store';
import { AppError } from '../../lib/errors/errors';
import { within } from '../support/eventually';
import { testRedis } from '../support/redis';
import { startAzurite, type Azurite } from '../model-rollout/support/azurite';

const ROOT = path.resolve(__dirname, '../../..');
const SHIPPED = readFileSync(path.join(ROOT, 'rulesets/fraud-rules/1.0.0.json'), 'utf8');
const NAME = 'fraud-rules';
const noTimers = { setTimeout: () => 0, clearTimeout: () => undefined };

/** The shipped ruleset at another version, with `edit` applied to its document. */
function variant(version: string, edit: (doc: Record<string, unknown>) => void = () => undefined): string {
  const doc = JSON.parse(SHIPPED) as Record<string, unknown>;
  doc['version'] = version;
  edit(doc);
  return JSON.stringify(doc);
}

interface Instance {
  decisioning: Decisioning;
  rollout: RulesetRollout;
  swapped: (version: string) => Promise<void>;
  /** Resolves when this instance applies the split `candidate:canaryPercent:shadowPercent` (`none`: no candidate). */
  applied: (split: string) => Promise<void>;
}

describe('ruleset rollout (Azurite + Redis, two instances)', () => {
  const r = testRedis();
  let azurite: Azurite;
  let container: ContainerClient;
  const instances: Instance[] = [];
  const clients: { disconnect(): void }[] = [];

  /** One Redis connection per instance, as each instance has its own. */
  function client(): ReturnType<typeof r.redis.duplicate> {
    const c = r.redis.duplicate();
    clients.push(c);
    return c;
  }

  async function instance(): Promise<Instance> {
    const waiters = new Map<string, () => void>();
    const splits = new Map<string, () => void>();
    const decisioning = new Decisioning(
      new ListLookup(new MemoryListStore(), { maxEntries: 10, ttlMs: 1000 }),
      loadRuleset(SHIPPED, GOLDEN_THRESHOLDS),
      {
        swapped: (e) => waiters.get(e.to)?.(),
        trafficChanged: (t) =>
          splits.get(t === undefined ? 'none' : `${t.candidate}:${t.canaryPercent}:${t.shadowPercent}`)?.(),
      },
    );
    const rollout = new RulesetRollout({
      name: NAME,
      decisioning,
      store: new RedisPointerStore(client(), r.prefix, 'ruleset', parseRulesetState),
      repository: blobRulesetRepository(container),
      timers: noTimers, // pub/sub only: no reconcile tick in this test
      reconcileMs: 60_000,
    });
    await rollout.start();
    const i = {
      decisioning,
      rollout,
      swapped: (v: string) =>
        within(new Promise<void>((resolve) => waiters.set(v, resolve)), `instance swap to ${v}`, 10_000),
      applied: (split: string) =>
        within(new Promise<void>((resolve) => splits.set(split, resolve)), `instance split ${split}`, 10_000),
    };
    instances.push(i);
    return i;
  }

  async function upload(version: string, text: string): Promise<string> {
    const name = rulesetBlobName(NAME, version);
    await container.getBlockBlobClient(name).upload(text, Buffer.byteLength(text));
    return `models/${name}`;
  }

  before(async () => {
    azurite = await startAzurite();
    container = await azurite.container('models');
  });
  after(async () => {
    for (const i of instances) await i.rollout.dispose();
    for (const c of clients) c.disconnect();
    await azurite.stop();
    await r.cleanup();
  });

  it('an upload validated on one instance swaps every instance; a bad one is rejected by rule id and nothing changes', async () => {
    const a = await instance();
    const b = await instance();
    const v11 = variant('1.1.0', (d) =>
      (d['rules'] as unknown[]).push({
        id: 'huge-amount',
        description: 'amount over 20000',
        when: 'event.amount > 20000.0',
        action: 'block',
      }),
    );
    const bSwapped = b.swapped('1.1.0');
    const published = await a.rollout.handleUpload({ blobPath: await upload('1.1.0', v11), bytes: Buffer.from(v11) });
    assert.equal(published.kind, 'published');
    assert.deepEqual(published.kind === 'published' && [published.name, published.version], [NAME, '1.1.0']);
    await bSwapped;
    assert.deepEqual([a.decisioning.ruleset?.version, b.decisioning.ruleset?.version], ['1.1.0', '1.1.0']);

    const broken = variant('1.2.0', (d) =>
      (d['rules'] as unknown[]).push({ id: 'broken-rule', when: 'event.amount >', action: 'block' }),
    );
    // a refusal is an outcome, as a model's is: recorded, and the previous version keeps serving
    const refused = await a.rollout.handleUpload({
      blobPath: await upload('1.2.0', broken),
      bytes: Buffer.from(broken),
    });
    assert.equal(refused.kind, 'rejected');
    const rejection = refused.kind === 'rejected' ? refused.rejection : undefined;
    assert.equal(rejection?.code, 'ruleset_invalid');
    assert.equal(rejection?.version, '1.2.0');
    assert.ok(
      rejection?.errors.some((e) => /^rule broken-rule: column \d+/.test(e.message)),
      'names the rule and column',
    );
    const status = await b.rollout.status(NAME);
    assert.equal(status.active?.version, '1.1.0');
    assert.equal(status.rejections[0]?.version, '1.2.0');
    assert.match(status.rejections[0]?.errors[0]?.message ?? '', /broken-rule/);
    assert.deepEqual([a.decisioning.ruleset?.version, b.decisioning.ruleset?.version], ['1.1.0', '1.1.0']);
  });

  it('rollback and promote move every instance', async () => {
    const [a, b] = instances as [Instance, Instance];
    const v10 = await upload('1.0.0', SHIPPED); // present in the container, as promote reads it
    assert.ok(v10.endsWith('1.0.0.json'));
    const back = b.swapped('1.0.0');
    await a.rollout.rollback(NAME);
    await back;
    assert.equal(b.decisioning.ruleset?.version, '1.0.0');
    const forward = b.swapped('1.1.0');
    await a.rollout.promote(NAME, { version: '1.1.0' });
    await forward;
    assert.equal(b.decisioning.ruleset?.version, '1.1.0');
  });

  it('a shadow ruleset counts the decisions it would change, by direction, without changing them', async () => {
    const [a] = instances as [Instance];
    const strict = variant('2.0.0', (d) =>
      (d['rules'] as unknown[]).push({
        id: 'all-web',
        description: 'web',
        when: 'has(event.channel) && event.channel == "web"',
        action: 'review',
      }),
    );
    await upload('2.0.0', strict);
    await a.rollout.traffic(NAME, { candidate: '2.0.0', shadowPercent: 100 });
    const base = { merchantId: 'm', merchantCategory: '5411', country: 'FR', amount: 10, userId: 'u' };
    for (const channel of ['web', 'web', 'pos']) {
      const event = { ...base, channel };
      const p = await a.decisioning.prepare(event);
      assert.ok(p !== undefined);
      const d = a.decisioning.decide(p, {
        event,
        features: { new_device: 0 },
        velocity: { count1h: 0 },
        score: 0.01,
        fallbackThresholds: { review: 0.2, decline: 0.7 },
      });
      assert.equal(d.decision, 'approve', 'the active ruleset decides');
    }
    const report = (await a.rollout.status(NAME)).shadow;
    assert.deepEqual(report, {
      active: '1.1.0',
      candidate: '2.0.0',
      evaluated: 3,
      changed: 2,
      byDirection: { 'approve→review': 2 },
    });
  });

  it('a canary sends each user to the same ruleset version on both instances, in its share; rollback ends it', async () => {
    const [a, b] = instances as [Instance, Instance];
    const bApplied = b.applied('2.0.0:30:0');
    await a.rollout.traffic(NAME, { candidate: '2.0.0', canaryPercent: 30 });
    await bApplied;
    const event = (i: number): Record<string, unknown> => ({
      transactionId: `t-${i}`,
      userId: `user-${i}`,
      merchantId: 'm',
      merchantCategory: '5411',
      country: 'FR',
      amount: 10,
      channel: 'pos',
    });
    const decidedBy = async (inst: Instance, e: Record<string, unknown>): Promise<string> => {
      const p = await inst.decisioning.prepare(e);
      assert.ok(p !== undefined, 'a ruleset is active');
      const d = inst.decisioning.decide(p, {
        event: e,
        features: { new_device: 0 },
        velocity: { count1h: 0 },
        score: 0.01,
        fallbackThresholds: { review: 0.2, decline: 0.7 },
      });
      return d.ruleset.version;
    };
    const n = 400;
    let canary = 0;
    for (let i = 0; i < n; i++) {
      const [va, vb] = [await decidedBy(a, event(i)), await decidedBy(b, event(i))];
      assert.equal(va, vb, `user-${i}: both instances use one version`);
      assert.equal(va, inRulesetCanary(`user-${i}`, 30) ? '2.0.0' : '1.1.0', `user-${i}`);
      if (va === '2.0.0') canary++;
    }
    assert.ok(canary > n * 0.2 && canary < n * 0.4, `30 % canary: ${canary} of ${n} users`);
    const withCanary = await b.rollout.status(NAME);
    assert.deepEqual(withCanary.candidate, { version: '2.0.0', canaryPercent: 30, shadowPercent: 0 });
    assert.deepEqual(
      [withCanary.serving, withCanary.servingCandidate],
      ['1.1.0', '2.0.0'],
      'the status of every whole-document kind: the version served and the candidate loaded here',
    );

    const bEnded = b.applied('none');
    await a.rollout.rollback(NAME);
    await bEnded;
    for (let i = 0; i < 50; i++) assert.equal(await decidedBy(b, event(i)), '1.0.0', `user-${i} after rollback`);
    const ended = await a.rollout.status(NAME);
    assert.deepEqual([ended.candidate, ended.servingCandidate], [undefined, undefined]);
  });

  it("upload and promote follow every kind's rules: never a version older than the active one", async () => {
    const [a] = instances as [Instance];
    const active = (await a.rollout.status(NAME)).active?.version ?? '';
    const older = await a.rollout.handleUpload({ blobPath: await upload('0.9.0', variant('0.9.0')) });
    assert.deepEqual(older.kind === 'rejected' ? [older.rejection.check, older.rejection.code] : [older.kind], [
      'version',
      'ruleset_invalid',
    ]);
    await assert.rejects(
      a.rollout.promote(NAME, { version: '0.9.0' }),
      (err: unknown) =>
        err instanceof AppError && err.code === 'conflict' && /older than the active version/.test(err.message),
    );
    assert.equal((await a.rollout.status(NAME)).active?.version, active, 'nothing changed');
  });

  it('refuses a traffic body naming every invalid field, and the active version as candidate', async () => {
    const [a] = instances as [Instance];
    await assert.rejects(
      a.rollout.traffic(NAME, { candidate: '', canaryPercent: 101, shadowPercent: 'x', extra: 1 }),
      (err: unknown) =>
        err instanceof AppError &&
        err.code === 'validation_failed' &&
        ['candidate', 'canaryPercent', 'shadowPercent', 'extra'].every((f) => err.errors.some((e) => e.path === f)),
    );
    await assert.rejects(
      a.rollout.traffic(NAME, { candidate: '1.0.0', canaryPercent: 10 }),
      (err: unknown) => err instanceof AppError && err.code === 'conflict',
    );
  });
});
