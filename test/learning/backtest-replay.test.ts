/** Backtest replay of rules over id fields the log keeps only as keyed hashes (`has()` guards, hashed lists). */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRuleset } from '../../lib/decisioning/compile-ruleset';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import { backtest, notReplayable, unreplayableFields } from '../../lib/learning/backtest';
import type { DecisionRecord } from '../../lib/learning/decision-record';
import { KeyedHash } from '../../lib/learning/keyed-hash';

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
    }
  });
});
