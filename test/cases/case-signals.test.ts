/**
 * What a case keeps of its payment's signals (lib/cases/case-signals.ts): which signals mattered (read by a rule
 * that fired, found in the rule's `when` text of the ruleset that decided; then the model's top reasons), every
 * signal's value and definition, the recent activity grouped by user, card, device, IP address and email, and the
 * size bound that keeps the intake message small (property test).
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import {
  MAX_SIGNALS_CHARS,
  activityOf,
  caseSignalsOf,
  caseSignalsSchema,
  signalsRead,
  signalsView,
  type CaseRulesets,
  type RulesetText,
} from '../../lib/cases/case-signals';
import { toNewCase } from '../../lib/cases/case-writer';
import type { DecidedPayment } from '../../lib/scoring/scorer';
import { compileSignals } from '../../lib/signals/compile-signals';
import type { CompiledSignals } from '../../lib/signals/compiled-signals';
import { payment } from './support';

const ROOT = path.resolve(__dirname, '../../..');
const v110 = compileSignals(
  JSON.parse(readFileSync(path.join(ROOT, 'examples', 'signals', 'default-1.1.0.json'), 'utf8')) as unknown,
);

const RULES: RulesetText = {
  name: 'fraud-rules',
  version: '1.1.0',
  document: {
    rules: [
      { id: 'large-amount-new-device', when: 'event.amount >= 1000.0 && features.new_device == 1.0' },
      { id: 'card-shared-1h', when: 'signals.card_users_1h >= 3.0 || signals.card_users_1h > signals.velocity_1h' },
      { id: 'velocity-burst', when: 'velocity.count1h >= 10.0' },
    ],
  },
};

/** The row of `v` with `values` by name (0 elsewhere). */
function rowOf(v: CompiledSignals, values: Record<string, number>): Float64Array {
  const row = new Float64Array(v.names.length);
  for (const [n, x] of Object.entries(values)) row[v.indexOf(n) ?? -1] = x;
  return row;
}

function decided(opts: {
  rules?: string[];
  reasons?: string[];
  ruleset?: { name: string; version: string };
  values?: Record<string, number>;
  version?: CompiledSignals | null;
}): DecidedPayment {
  const v = opts.version === undefined ? v110 : opts.version;
  return {
    event: payment(),
    result: {
      transactionId: 'tx-1',
      decision: 'review',
      reasons: [
        ...(opts.reasons ?? []).map((code) => ({ code, contribution: 0.5, description: code })),
        ...(opts.rules ?? []).map((id) => ({ code: `rule:${id}`, contribution: 0, description: id })),
      ],
      rules: (opts.rules ?? []).map((id) => ({ id, action: 'review' })),
      ruleset: opts.ruleset ?? { name: 'fraud-rules', version: '1.1.0' },
      model: { name: 'fraud', version: '1.0.0' },
    },
    ...(v === null ? {} : { signals: { version: v, row: rowOf(v, opts.values ?? {}) } }),
  } as unknown as DecidedPayment;
}

describe('case signals', () => {
  it('reads signals.<name> and features.<name> from a rule, once each, in order of first use', () => {
    assert.deepEqual(signalsRead('signals.b > 1.0 && features.a == 1.0 || signals.b < 9.0'), ['b', 'a']);
    assert.deepEqual(signalsRead('event.signals.x == 1.0 || velocity.count1h > 2.0'), []);
  });

  it('mattered: the signals the fired rules read (in rule order), then the model reasons; each with why', () => {
    const s = caseSignalsOf(
      decided({
        rules: ['card-shared-1h', 'large-amount-new-device'],
        reasons: ['amount_log', 'new_device', 'not_a_signal'],
        values: { card_users_1h: 3, new_device: 1, amount_log: 7.3, velocity_1h: 0.5 },
      }),
      { ruleset: RULES },
    );
    assert.ok(s !== undefined);
    assert.deepEqual(s.version, { name: 'default', version: '1.1.0' });
    assert.deepEqual(s.mattered, [
      { name: 'card_users_1h', rules: ['card-shared-1h'], model: false },
      { name: 'velocity_1h', rules: ['card-shared-1h'], model: false },
      { name: 'new_device', rules: ['large-amount-new-device'], model: true },
      { name: 'amount_log', rules: [], model: true },
    ]);
    assert.equal(s.signals.length, v110.names.length, 'every signal kept');
    assert.equal(s.omitted, 0);
    assert.deepEqual(s.signals[0], {
      name: 'card_users_1h',
      value: 3,
      definition: v110.definition('card_users_1h'),
      kind: 'aggregate',
      key: ['cardFingerprint'],
      op: 'distinct',
      window: '1h',
    });
    assert.match(s.signals[0]?.definition ?? '', /different users paid with this card/);
    assert.deepEqual(s.signals[1], {
      name: 'amount_log',
      value: 7.3,
      definition: v110.definition('amount_log'),
      kind: 'feature',
    });
    assert.ok(caseSignalsSchema.safeParse(JSON.parse(JSON.stringify(s))).success, 'the intake accepts it');
    const view = signalsView(s);
    assert.deepEqual(
      view.mattered.map((m) => [m.name, m.value]),
      [
        ['card_users_1h', 3],
        ['velocity_1h', 0.5],
        ['new_device', 1],
        ['amount_log', 7.3],
      ],
    );
    assert.equal(view.all.length, v110.names.length);
  });

  it('the deciding ruleset is found among the active and the candidate; another one gives the model reasons only', () => {
    const d = decided({ rules: ['card-shared-1h'], reasons: ['new_device'] });
    const other: RulesetText = { ...RULES, version: '1.0.0' };
    const held = (r: CaseRulesets) => caseSignalsOf(d, r)?.mattered.map((m) => m.name);
    assert.deepEqual(held({ ruleset: other, candidate: RULES }), ['card_users_1h', 'velocity_1h', 'new_device']);
    assert.deepEqual(held({ ruleset: other }), ['new_device'], 'the ruleset that decided is not held');
    assert.deepEqual(held({ ruleset: undefined }), ['new_device']);
    assert.deepEqual(
      caseSignalsOf(d)?.mattered.map((m) => m.name),
      ['new_device'],
      'no rulesets given',
    );
  });

  it('no signals on the event: none kept; a value that is not finite is kept as null', () => {
    assert.equal(caseSignalsOf(decided({ version: null })), undefined);
    const s = caseSignalsOf(decided({ values: { card_users_1h: Number.NaN, amount_log: Infinity } }));
    assert.equal(s?.signals.find((x) => x.name === 'card_users_1h')?.value, null);
    assert.equal(s?.signals.find((x) => x.name === 'amount_log')?.value, null);
  });

  it("the case writer's case carries them, the deciding ruleset's rules read from the writer's rulesets", () => {
    const d = decided({ rules: ['card-shared-1h'], reasons: ['new_device'], values: { card_users_1h: 3 } });
    const c = toNewCase(d, 1_000, { ruleset: RULES });
    assert.deepEqual(
      c.signals?.mattered.map((m) => m.name),
      ['card_users_1h', 'velocity_1h', 'new_device'],
    );
    assert.equal(c.signals?.signals[0]?.value, 3);
    assert.equal(toNewCase(decided({ version: null }), 1_000).signals, undefined);
    assert.ok(!('signals' in toNewCase(decided({ version: null }), 1_000)), 'no key without signals');
  });

  it('activity: per user, card, device, IP address and email, the aggregates keyed by exactly that field', () => {
    const v = compileSignals({
      schemaVersion: 1,
      name: 'default',
      version: '2.0.0',
      aggregates: [
        { name: 'card_count_1h', key: 'cardFingerprint', op: 'count', window: '1h' },
        { name: 'card_users_1h', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h' },
        { name: 'user_sum_24h', key: 'userId', op: 'sum', of: 'amount', window: '24h' },
        { name: 'card_merchant_1h', key: ['cardFingerprint', 'merchantId'], op: 'count', window: '1h' },
        { name: 'ip_users_1d', key: 'ipAddress', op: 'distinct', of: 'userId', window: '1d' },
        { name: 'merchant_count_1h', key: 'merchantId', op: 'count', window: '1h' },
      ],
      features: [{ name: 'amount_log', builtin: 'amount_log' }],
    });
    const s = caseSignalsOf(
      decided({ version: v, values: { card_count_1h: 4, card_users_1h: 2, user_sum_24h: 120.5, ip_users_1d: 0 } }),
    );
    assert.ok(s !== undefined);
    const groups = activityOf(s, payment({ cardFingerprint: 'tok_1', deviceId: 'dev-1' }));
    assert.deepEqual(
      groups.map((g) => [g.label, g.present, g.aggregates.map((a) => `${a.name}=${a.value}`)]),
      [
        ['user', true, ['user_sum_24h=120.5']],
        ['card', true, ['card_count_1h=4', 'card_users_1h=2']],
        ['device', true, []],
        ['IP address', false, ['ip_users_1d=0']],
        ['email', false, []],
      ],
    );
  });

  it('property: the kept signals stay within the budget, always keep the ones that mattered, in row order', () => {
    const long = 'x'.repeat(500);
    const v = compileSignals({
      schemaVersion: 1,
      name: 'big',
      version: '1.0.0',
      aggregates: Array.from({ length: 64 }, (_, i) => ({
        name: `agg_${i}`,
        description: long,
        key: 'cardFingerprint',
        op: 'count',
        window: `${i + 1}h`,
      })),
      features: Array.from({ length: 256 }, (_, i) => ({ name: `f_${i}`, description: long, value: 'event.amount' })),
    });
    fc.assert(
      fc.property(
        fc.uniqueArray(fc.integer({ min: 0, max: v.names.length - 1 }), { maxLength: 12 }),
        fc.array(fc.double({ noNaN: false }), { minLength: v.names.length, maxLength: v.names.length }),
        (reasonIdx, values) => {
          const reasons = reasonIdx.map((i) => v.names[i] as string);
          const d = decided({ version: v, reasons });
          d.signals?.row.set(values);
          const s = caseSignalsOf(d);
          assert.ok(s !== undefined);
          assert.ok(JSON.stringify(s.signals).length <= MAX_SIGNALS_CHARS, 'within the budget');
          assert.equal(s.signals.length + s.omitted, v.names.length);
          const kept = s.signals.map((x) => x.name);
          for (const r of reasons) assert.ok(kept.includes(r), `${r} mattered and is kept`);
          const order = kept.map((n) => v.indexOf(n) ?? -1);
          assert.deepEqual(
            order,
            [...order].sort((a, b) => a - b),
          );
          assert.ok(
            s.signals.every((x) => x.value === null || Number.isFinite(x.value)),
            'values are numbers or null',
          );
        },
      ),
      { numRuns: 50 },
    );
  });
});
