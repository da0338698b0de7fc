/**
 * The transitions every version-swapping kind shares (lib/rollout/version-traffic.ts), as the signals kind uses them:
 * activate keeps the one before for rollback, promote and traffic refuse the active version naming the field, rollback
 * ends the split, traffic at 0/0 ends it; and the signals canary is its own (another salt than the ruleset's).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { RULESET_TRAFFIC } from '../../lib/decisioning/ruleset-traffic';
import { AppError } from '../../lib/errors/errors';
import { MAX_HISTORY, parseVersionState, type VersionState } from '../../lib/rollout/version-traffic';
import { EMPTY_SIGNALS_STATE, SIGNALS_BODIES, SIGNALS_TRAFFIC } from '../../lib/signals/signals-traffic';

const T = SIGNALS_TRAFFIC;
const split = (candidate: string, canaryPercent: number, shadowPercent = 0) => ({
  candidate,
  canaryPercent,
  shadowPercent,
});

describe('signals pointer transitions', () => {
  it('activate keeps the shipped version for rollback, never the version itself; a split on it ends', () => {
    const a = T.activate(EMPTY_SIGNALS_STATE, '1.1.0', '1.0.0');
    assert.deepEqual([a?.active, a?.previous], ['1.1.0', ['1.0.0']]);
    assert.equal(T.activate(EMPTY_SIGNALS_STATE, '1.0.0', '1.0.0'), undefined, 'never its own previous version');
    const withSplit: VersionState = { ...EMPTY_SIGNALS_STATE, active: '1.1.0', traffic: split('1.2.0', 10) };
    assert.equal(T.activate(withSplit, '1.2.0', '1.1.0')?.traffic, undefined, "the candidate's split ends");
    assert.deepEqual(T.activate(withSplit, '1.3.0', '1.1.0')?.traffic, split('1.2.0', 10), 'another split stays');
  });

  it('keeps at most MAX_HISTORY previous versions', () => {
    let s: VersionState = EMPTY_SIGNALS_STATE;
    for (let i = 1; i <= MAX_HISTORY + 5; i++) s = T.activate(s, `1.${i}.0`, '1.0.0') ?? s;
    assert.equal(s.previous.length, MAX_HISTORY);
    assert.equal(s.previous[0], `1.${MAX_HISTORY + 4}.0`);
  });

  it('promote and traffic refuse the active version (409 naming the field); rollback with nothing to go back to is 409', () => {
    const conflict = (path: string) => (e: unknown) =>
      e instanceof AppError && e.code === 'conflict' && e.errors[0]?.path === path && /signals version/.test(e.message);
    assert.throws(() => T.promoteTo(EMPTY_SIGNALS_STATE, '1.0.0', '1.0.0'), conflict('version'));
    assert.throws(() => T.setTraffic(EMPTY_SIGNALS_STATE, split('1.0.0', 5), '1.0.0'), conflict('candidate'));
    assert.throws(
      () => T.rollBack(EMPTY_SIGNALS_STATE),
      (e) => e instanceof AppError && e.code === 'conflict' && /No previous signals version/.test(e.message),
    );
  });

  it('rollback returns to the previous version and ends the split; traffic 0/0 ends the split, the same split is a no-op', () => {
    const s: VersionState = {
      ...EMPTY_SIGNALS_STATE,
      active: '1.2.0',
      previous: ['1.1.0'],
      traffic: split('1.3.0', 5),
    };
    const back = T.rollBack(s);
    assert.deepEqual([back?.active, back?.previous, back?.traffic], ['1.1.0', [], undefined]);
    assert.equal(T.setTraffic(s, split('1.3.0', 0, 0), undefined)?.traffic, undefined);
    assert.equal(T.setTraffic(s, split('1.3.0', 5), undefined), undefined, 'unchanged');
    assert.equal(T.setTraffic(EMPTY_SIGNALS_STATE, split('1.3.0', 0, 0), '1.0.0'), undefined, 'nothing to end');
  });

  it('a stored state parses back; unknown fields are dropped', () => {
    const s = { generation: 3, active: '1.1.0', previous: ['1.0.0'], traffic: split('1.2.0', 10), extra: 1 };
    assert.deepEqual(parseVersionState(JSON.stringify(s)), {
      generation: 3,
      active: '1.1.0',
      previous: ['1.0.0'],
      traffic: split('1.2.0', 10),
    });
  });

  it('the admin bodies name every bad field (versions like 1.1.0)', () => {
    assert.equal(SIGNALS_BODIES.version({ version: '1.1.0' }), '1.1.0');
    assert.throws(
      () => SIGNALS_BODIES.traffic({ candidate: 'v1', canaryPercent: 200 }),
      (e) =>
        e instanceof AppError &&
        e.code === 'validation_failed' &&
        e.errors.some((x) => x.path === 'candidate') &&
        e.errors.some((x) => x.path === 'canaryPercent'),
    );
  });

  it('the signals canary is stable per user and independent of the ruleset canary', () => {
    fc.assert(
      fc.property(fc.string({ minLength: 1, maxLength: 40 }), fc.integer({ min: 0, max: 100 }), (user, pct) => {
        assert.equal(T.inCanary(user, pct), T.inCanary(user, pct));
        if (pct === 0) assert.equal(T.inCanary(user, pct), false);
        if (pct === 100) assert.equal(T.inCanary(user, pct), true);
      }),
    );
    const users = Array.from({ length: 2000 }, (_, i) => `user-${i}`);
    const signals = users.filter((u) => T.inCanary(u, 50));
    const rulesets = users.filter((u) => RULESET_TRAFFIC.inCanary(u, 50));
    assert.ok(signals.length > 800 && signals.length < 1200, `about half: ${signals.length}`);
    assert.notDeepEqual(signals, rulesets, 'another salt: another set of users');
  });
});
