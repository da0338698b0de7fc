import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { compileRuleset } from '../../lib/decisioning/compile-ruleset';
import { evaluateRuleset, type DecisionInput } from '../../lib/decisioning/evaluate-ruleset';
import { loadRuleset } from '../../lib/decisioning/load-ruleset';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { EMPTY_VELOCITY } from '../../lib/domain/user-context';
import { AppError } from '../../lib/errors/errors';
import { compileSignals } from '../../lib/signals/compile-signals';
import { signalsView } from '../../lib/signals/signals-view';
import { validEvent } from '../support/events';

const MODEL = { review: 0.5, decline: 0.9 };
const SERVING = { names: new Set(['card_users_1h', 'amount_log']), version: '1.1.0' };

const ruleset = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  name: 'r',
  version: '2',
  signals: { name: 'default', version: '1.1.0' },
  rules: [{ id: 'shared-card', when: 'signals.card_users_1h >= 3', action: 'review' }],
  offsets: [{ id: 'big', when: 'signals["amount_log"] > 5.0', offset: 0.1 }],
  ...over,
});

const input = (signals?: Readonly<Record<string, number>>): DecisionInput => ({
  event: parsePaymentEvent(validEvent()),
  features: {},
  velocity: { ...EMPTY_VELOCITY },
  ...(signals === undefined ? {} : { signals }),
  score: 0.1,
  lists: new Map(),
  fallbackThresholds: MODEL,
});

function rejection(value: unknown, serving = SERVING): AppError {
  try {
    compileRuleset(value, serving);
  } catch (err) {
    assert.ok(err instanceof AppError, String(err));
    return err;
  }
  assert.fail('the ruleset was accepted');
}

describe('rules read signals', () => {
  it('compiles signals.<name> the serving version has, and exposes the signals it reads and declares', () => {
    const rs = compileRuleset(ruleset(), SERVING);
    assert.deepEqual(rs.signalsUsed, ['card_users_1h', 'amount_log']);
    assert.deepEqual(rs.signals, { name: 'default', version: '1.1.0' });
    const plain = compileRuleset(ruleset({ signals: undefined }));
    assert.deepEqual(plain.signalsUsed, ['card_users_1h', 'amount_log'], 'collected without a serving version');
    assert.equal(plain.signals, undefined);
  });

  it('evaluates a rule over the payment signals', () => {
    const rs = compileRuleset(ruleset(), SERVING);
    const fired = evaluateRuleset(rs, input({ card_users_1h: 3, amount_log: 6 }));
    assert.equal(fired.decision, 'review');
    assert.deepEqual(
      fired.rules.map((r) => r.id),
      ['shared-card'],
    );
    assert.deepEqual(fired.offsets, [{ id: 'big', offset: 0.1 }]);
    assert.deepEqual(fired.errors, []);
    const quiet = evaluateRuleset(rs, input({ card_users_1h: 2, amount_log: 1 }));
    assert.equal(quiet.decision, 'approve');
    assert.deepEqual([quiet.rules, quiet.errors], [[], []]);
  });

  it('reads a signals row through the view of its version', () => {
    const signals = compileSignals({
      schemaVersion: 1,
      name: 'default',
      version: '1.1.0',
      aggregates: [{ name: 'card_users_1h', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h' }],
      features: [{ name: 'amount_log', builtin: 'amount_log' }],
    });
    const rs = compileRuleset(ruleset(), { names: new Set(signals.names), version: signals.version });
    const row = new Float64Array(signals.names.length);
    signals.compute(
      parsePaymentEvent(validEvent({ amount: 1000 })),
      { profile: null, velocity: EMPTY_VELOCITY },
      Float64Array.of(4),
      row,
    );
    const view = signalsView(signals.names);
    const out = view.with(row, (s) => evaluateRuleset(rs, input(s)));
    assert.equal(out.decision, 'review');
    assert.deepEqual(out.offsets, [{ id: 'big', offset: 0.1 }]);
  });

  it('fails closed when the payment brings no signals', () => {
    const out = evaluateRuleset(compileRuleset(ruleset(), SERVING), input());
    assert.equal(out.decision, 'review');
    assert.deepEqual(
      out.errors.map((e) => e.ruleId),
      ['shared-card', 'big'],
    );
  });

  it('refuses a signal the serving version lacks, naming the rule, the path and the column', () => {
    const e = rejection(
      ruleset({
        rules: [
          { id: 'ok', when: 'signals.card_users_1h >= 3', action: 'review' },
          { id: 'typo', when: 'event.amount > 1.0 && signals.card_user_1h > 2', action: 'block' },
        ],
        offsets: [{ id: 'off', when: 'has(signals.nope)', offset: 0.1 }],
      }),
    );
    assert.equal(e.code, 'ruleset_invalid');
    assert.deepEqual(
      e.errors.map((x) => [x.path, x.rule, x.column]),
      [
        ['rules.1.when', 'typo', 23],
        ['offsets.0.when', 'off', 5],
      ],
    );
    assert.match(
      e.errors[0]?.message ?? '',
      /^rule typo: column 23: signal "card_user_1h" is not in signals version 1\.1\.0/,
    );
    assert.match(e.message, /rule typo \(rules\.1\.when, column 23\): signal "card_user_1h"/);
  });

  it('refuses a bad signals declaration, naming the field', () => {
    const e = rejection(ruleset({ signals: { name: 'Default', version: '1' } }));
    assert.deepEqual(
      e.errors.map((x) => x.path),
      ['signals.name', 'signals.version'],
    );
  });

  it('runs golden cases with their signals, and loadRuleset checks against the serving version', () => {
    const text = JSON.stringify(
      ruleset({
        golden: [
          {
            name: 'shared',
            event: validEvent(),
            score: 0.1,
            signals: { card_users_1h: 5, amount_log: 1 },
            expect: { decision: 'review', rules: ['shared-card'] },
          },
          {
            name: 'alone',
            event: validEvent(),
            score: 0.1,
            signals: { card_users_1h: 1, amount_log: 1 },
            expect: { decision: 'approve' },
          },
        ],
      }),
    );
    assert.equal(loadRuleset(text, MODEL, 'r.json', SERVING).signalsUsed.length, 2);
    assert.throws(
      () => loadRuleset(text, MODEL, 'r.json', { names: new Set(['amount_log']), version: '1.0.0' }),
      (e: unknown) =>
        e instanceof AppError &&
        /\(r\.json\).*signal "card_users_1h" is not in signals version 1\.0\.0/.test(e.message),
    );
  });
});
