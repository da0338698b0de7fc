/**
 * The decision log records the list memberships each decision used (the serving ruleset's lists, not a shadow
 * candidate's), taken from the prefetch the decision already made: the list store is asked once per payment
 * (counted by a wrapper), and no more for the log. Through the real scorer (`score` and `scoreBatch`).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { noHistoryProvider } from '../../lib/context/context-provider';
import { compileRuleset } from '../../lib/decisioning/compile-ruleset';
import { Decisioning } from '../../lib/decisioning/decisioning';
import { ListLookup } from '../../lib/decisioning/list-lookup';
import { MemoryListStore } from '../../lib/decisioning/list-store';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import type { SessionManager } from '../../lib/inference/session-manager';
import { toDecisionRecord, type DecisionRecord } from '../../lib/learning/decision-record';
import { KeyedHash } from '../../lib/platform/keyed-hash';
import { Scorer } from '../../lib/scoring/scorer';
import { fakeBackendFactory, fakeModelSource } from '../context/fake-model';
import { validEvent } from '../support/events';

/** The in-process list store, counting its membership round trips. */
class CountingListStore extends MemoryListStore {
  memberUntilCalls = 0;
  containsCalls = 0;
  override memberUntil(keys: readonly { readonly name: string; readonly value: string }[]): Promise<number[]> {
    this.memberUntilCalls++;
    return super.memberUntil(keys);
  }
  override contains(keys: readonly { readonly name: string; readonly value: string }[]): Promise<boolean[]> {
    this.containsCalls++;
    return super.contains(keys);
  }
}

const SERVING = {
  name: 'fraud-rules',
  version: '1.0.0',
  lists: [
    { name: 'blocked_devices', key: 'deviceId' },
    { name: 'vip_users', key: 'userId' },
  ],
  rules: [
    { id: 'blocked-device', when: 'in_list("blocked_devices", event.deviceId)', action: 'block' },
    { id: 'vip', when: 'in_list("vip_users", event.userId) && event.amount < 50.0', action: 'allow' },
  ],
};
/** A candidate in shadow reading a list the serving ruleset does not. */
const SHADOW = {
  ...SERVING,
  version: '1.1.0',
  lists: [...SERVING.lists, { name: 'watched_devices', key: 'deviceId' }],
  rules: [{ id: 'watched', when: 'in_list("watched_devices", event.deviceId)', action: 'review' }],
};

async function setup(withRules = true) {
  const store = new CountingListStore();
  await store.add('blocked_devices', ['dev-bad']);
  await store.add('watched_devices', ['dev-bad']);
  const decisioning = new Decisioning(
    new ListLookup(store, { maxEntries: 100, ttlMs: 60_000 }),
    compileRuleset(SERVING),
  );
  decisioning.setCandidate(compileRuleset(SHADOW), { candidate: '1.1.0', canaryPercent: 0, shadowPercent: 100 });
  const { manifest } = await fakeModelSource.load();
  const backend = await fakeBackendFactory.load({
    inputName: 'features',
    outputName: 'score',
    inputWidth: FEATURE_COUNT,
    bytes: new Uint8Array(),
  });
  const sessions = { acquire: () => ({ manifest, backend, release: () => undefined }) } as unknown as SessionManager;
  const hash = new KeyedHash('decision-memberships-test-key-0123');
  const records: DecisionRecord[] = [];
  const scorer = new Scorer({
    sessions,
    context: noHistoryProvider,
    deadlineMs: 1000,
    ...(withRules ? { decisioning } : {}),
    on: { decided: (d) => records.push(toDecisionRecord(d, hash, Date.parse('2026-12-01T10:00:00Z'))) },
  });
  return { store, scorer, records };
}

describe('decision log: list memberships', () => {
  it('records, for each list the serving ruleset consulted, whether the payment was on it: one store round trip', async () => {
    const { store, scorer, records } = await setup();
    const r = await scorer.score(parsePaymentEvent(validEvent({ transactionId: 't-1', deviceId: 'dev-bad' })));
    assert.equal(r.decision, 'decline');
    assert.deepEqual(records[0]?.lists, { blocked_devices: true, vip_users: false });
    assert.equal(store.memberUntilCalls, 1, 'the prefetch, once: the log asks nothing more');
    assert.equal(store.containsCalls, 0);
    assert.deepEqual(records[0]?.signalsVersion, { name: 'default', version: '1.0.0' }, 'the shipped signals');
    assert.equal(records[0]?.signals, undefined, 'the shipped signals are the model inputs: in features, not twice');
  });

  it('the batch path records them too, per payment', async () => {
    const { store, scorer, records } = await setup();
    await scorer.scoreBatch([
      parsePaymentEvent(validEvent({ transactionId: 't-2', deviceId: 'dev-ok', userId: 'u-2' })),
      parsePaymentEvent(validEvent({ transactionId: 't-3', deviceId: 'dev-bad', userId: 'u-3' })),
    ]);
    assert.deepEqual(
      records.map((x) => [x.transactionId, x.lists]),
      [
        ['t-2', { blocked_devices: false, vip_users: false }],
        ['t-3', { blocked_devices: true, vip_users: false }],
      ],
    );
    assert.equal(store.memberUntilCalls, 2, 'one prefetch per payment');
  });

  it('without a ruleset the record says no list was consulted: {}', async () => {
    const { store, scorer, records } = await setup(false);
    await scorer.score(parsePaymentEvent(validEvent({ transactionId: 't-4', deviceId: 'dev-bad' })));
    assert.deepEqual(records[0]?.lists, {});
    assert.equal(store.memberUntilCalls, 0);
  });
});
