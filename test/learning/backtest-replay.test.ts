/**
 * Backtest replay of rules over id fields the log keeps only as keyed hashes (`has()` guards, hashed lists), and
 * of lists as they were when each payment was decided (the memberships the log recorded).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRuleset } from '../../lib/decisioning/compile-ruleset';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import { backtest, notReplayable, unreplayableFields } from '../../lib/learning/backtest';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import { KeyedHash } from '../../lib/platform/keyed-hash';

const hash = new KeyedHash('backtest-replay-test-key-0123456789');
const THRESHOLDS = { review: 0.5, decline: 0.9 };

/** A logged approve of a payment, with `deviceId` hashed as the log keeps it, or absent. */
function logged(transactionId: string, deviceId: string | undefined): DecisionRecord {
  const event: Record<string, string | number> = { transactionId, userId: hash.of('u-1'), amount: 20 };
  if (deviceId !== undefined) event['deviceId'] = hash.of(deviceId);
  return {
    v: 1,
    transactionId,
    decidedAt: '2026-12-01T10:00:00.000Z',
    model: { name: 'fraud', version: '1.0.0' },
    features: {},
    velocity: { ...EMPTY_VELOCITY },
    score: 0.01,
    decision: 'approve',
    rules: [],
    source: 'local',
    event,
    hashed: deviceId === undefined ? ['userId'] : ['userId', 'deviceId'],
  };
}

const DOC = {
  name: 'r',
  version: '2.0.0',
  lists: [{ name: 'blocked_devices', key: 'deviceId' }],
  rules: [
    {
      id: 'blocked-device',
      when: 'has(event.deviceId) && in_list("blocked_devices", event.deviceId)',
      action: 'block',
    },
  ],
};

describe('backtest over hashed id fields', () => {
  it('a has() guard on a hashed field is replayable; reading its raw value or an omitted field is not', () => {
    assert.deepEqual(unreplayableFields('has(event.deviceId) && in_list("blocked_devices", event.deviceId)'), []);
    assert.deepEqual(unreplayableFields('has( event . cardFingerprint )'), []);
    assert.deepEqual(unreplayableFields('has(event.deviceId) && event.deviceId == "d-1"'), ['deviceId']);
    assert.deepEqual(unreplayableFields('has(event.note)'), ['note']);
    assert.deepEqual(notReplayable({ rules: DOC.rules, offsets: [] }), []);
  });

  it('replays a deviceId list rule guarded by has(): a listed device changes decision, no device changes nothing', () => {
    const records = [logged('t-listed', 'dev-bad'), logged('t-other', 'dev-ok'), logged('t-none', undefined)];
    const labels = new Map<string, 0 | 1>([
      ['t-listed', 1],
      ['t-other', 0],
      ['t-none', 0],
    ]);
    for (const entries of [['dev-bad'], [hash.of('dev-bad')]]) {
      // raw entries are hashed with the log's key; entries exported already hashed are taken as they are
      const report = backtest(records, labels, {
        ruleset: compileRuleset(DOC),
        thresholds: THRESHOLDS,
        lists: { blocked_devices: entries },
        hash,
      });
      assert.deepEqual(report.changes, { 'approve→decline': 1 }, JSON.stringify(entries));
      assert.equal(report.candidate.recall, 1);
      assert.equal(report.current.recall, 0);
      // records from before memberships were logged: today's entries, and the report says so
      assert.deepEqual(report.lists, {
        recordsWithoutMemberships: 3,
        currentEntries: ['blocked_devices'],
        notReplayed: [],
      });
    }
  });
});

describe('backtest lists at the time of the payment', () => {
  /** A logged approve of device `deviceId` by a ruleset that consulted the lists of `lists`. */
  const decided = (transactionId: string, deviceId: string, lists: Record<string, boolean>): DecisionRecord => ({
    ...logged(transactionId, deviceId),
    ruleset: { name: 'r', version: '1.0.0' },
    lists,
  });
  const DRAFT = {
    ...DOC,
    lists: [...DOC.lists, { name: 'watched_devices', key: 'deviceId' }],
    rules: [
      ...DOC.rules,
      { id: 'watched-device', when: 'in_list("watched_devices", event.deviceId)', action: 'review' },
    ],
    offsets: [{ id: 'watched-offset', when: "in_list('watched_devices', event.deviceId)", offset: 0.2 }],
  };
  // today both lists hold dev-bad: it was added to blocked_devices after these payments were decided
  const TODAY = { blocked_devices: ['dev-bad'], watched_devices: ['dev-bad'] };
  const records = [
    decided('t-1', 'dev-bad', { blocked_devices: false }),
    decided('t-2', 'dev-bad', { blocked_devices: false }),
    decided('t-3', 'dev-ok', { blocked_devices: false }),
    decided('t-4', 'dev-listed', { blocked_devices: true }),
  ];
  const labels = new Map<string, 0 | 1>([['t-1', 1]]);

  it('replays the membership each decision recorded: an entry added later changes nothing', () => {
    const report = backtest(records, labels, {
      ruleset: compileRuleset({ ...DOC, version: '2.0.1' }),
      thresholds: THRESHOLDS,
      lists: TODAY,
      hash,
    });
    // t-1 and t-2 were not on the list when decided: only t-4 (recorded on it, not on today's list) changes
    assert.deepEqual(report.changes, { 'approve→decline': 1 });
    assert.deepEqual(Object.keys(report.rules), ['blocked-device']);
    assert.equal(report.rules['blocked-device']?.hits, 1);
    assert.equal(report.candidate.recall, 0, 'the fraud on t-1 is not credited to the draft');
    assert.deepEqual(report.lists, { recordsWithoutMemberships: 0, currentEntries: [], notReplayed: [] });
  });

  it('a list the decisions did not consult: its rules are left out unless useCurrentLists, and the report says which', () => {
    const ruleset = compileRuleset(DRAFT);
    const without = backtest(records, labels, { ruleset, thresholds: THRESHOLDS, lists: TODAY, hash });
    assert.deepEqual(without.changes, { 'approve→decline': 1 });
    assert.deepEqual(without.lists, {
      recordsWithoutMemberships: 0,
      currentEntries: [],
      notReplayed: [{ list: 'watched_devices', rules: ['watched-device', 'watched-offset'], records: 4 }],
    });

    const current = backtest(records, labels, {
      ruleset,
      thresholds: THRESHOLDS,
      lists: TODAY,
      hash,
      useCurrentLists: true,
    });
    // today's watched_devices holds dev-bad: t-1 and t-2 go to review; blocked_devices stays as recorded
    assert.deepEqual(current.changes, { 'approve→review': 2, 'approve→decline': 1 });
    assert.equal(current.rules['watched-device']?.hits, 2);
    assert.deepEqual(current.lists, {
      recordsWithoutMemberships: 0,
      currentEntries: ['watched_devices'],
      notReplayed: [],
    });
  });
});
