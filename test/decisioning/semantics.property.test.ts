import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileRuleset } from '../../lib/decisioning/compile-ruleset';
import { evaluateRuleset, type RuleDecision } from '../../lib/decisioning/evaluate-ruleset';
import { ACTIONS, type Action } from '../../lib/decisioning/ruleset-schema';

/** How a generated expression behaves: fires, does not fire, or fails at run time (a missing map key). */
type Behaviour = 'fires' | 'quiet' | 'throws';
const SOURCE: Readonly<Record<Behaviour, string>> = {
  fires: 'event.amount > 0.0',
  quiet: 'event.amount < 0.0',
  throws: 'event.no_such_field == 1',
};

const behaviour = fc.constantFrom<Behaviour>('fires', 'quiet', 'throws');
const rule = fc.record({ action: fc.constantFrom<Action>(...ACTIONS), b: behaviour });
const offset = fc.record({ b: behaviour, offset: fc.double({ min: -0.5, max: 0.5, noNaN: true }) });
const thresholds = fc
  .tuple(fc.double({ min: 0, max: 1, noNaN: true }), fc.double({ min: 0, max: 1, noNaN: true }))
  .map(([a, b]) => ({ review: Math.min(a, b), decline: Math.max(a, b) }));
const score = fc.oneof(fc.double({ min: 0, max: 1, noNaN: true }), fc.constant(null));

const RANK: Record<RuleDecision, number> = { approve: 0, review: 1, decline: 2 };

interface Case {
  rules: { action: Action; b: Behaviour }[];
  offsets: { b: Behaviour; offset: number }[];
  t: { review: number; decline: number };
  profileOffset: number;
  score: number | null;
}

function run(c: Case) {
  const rs = compileRuleset({
    name: 'p',
    version: '1',
    rules: c.rules.map((r, i) => ({ id: `r${i}`, when: SOURCE[r.b], action: r.action })),
    offsets: c.offsets.map((o, i) => ({ id: `o${i}`, when: SOURCE[o.b], offset: o.offset })),
    profiles: [{ id: 'default', thresholds: c.t, offset: c.profileOffset }],
  });
  return evaluateRuleset(rs, {
    event: { amount: 10, merchantId: 'm', merchantCategory: '5411' },
    features: {},
    velocity: {},
    score: c.score,
    lists: new Map(),
    fallbackThresholds: { review: 0.5, decline: 0.9 },
  });
}

/** The semantics table, written out independently of the evaluator. */
function expected(c: Case): { decision: RuleDecision; fired: string[]; errors: string[]; escalate: boolean } {
  const ids = c.rules.map((r, i) => ({ ...r, id: `r${i}` }));
  const errors: string[] = [];
  for (const action of ['allow', 'block'] as const) {
    for (const r of ids.filter((x) => x.action === action)) {
      if (r.b === 'throws') errors.push(r.id);
      if (r.b !== 'fires') continue;
      const decision = action === 'block' ? 'decline' : c.score !== null && errors.length === 0 ? 'approve' : 'review';
      return { decision, fired: [r.id], errors, escalate: false };
    }
  }
  const fired: string[] = [];
  let floor: RuleDecision = 'approve';
  let escalate = false;
  for (const action of ['review', 'escalate'] as const)
    for (const r of ids.filter((x) => x.action === action)) {
      if (r.b === 'throws') errors.push(r.id);
      if (r.b !== 'fires') continue;
      fired.push(r.id);
      if (action === 'review') floor = 'review';
      else escalate = true;
    }
  let total = c.profileOffset;
  c.offsets.forEach((o, i) => {
    if (o.b === 'throws') errors.push(`o${i}`);
    if (o.b === 'fires') total += o.offset;
  });
  let decision: RuleDecision = 'review';
  if (c.score !== null) {
    const s = Math.min(1, Math.max(0, c.score + total));
    decision = s >= c.t.decline ? 'decline' : s < c.t.review ? 'approve' : 'review';
  }
  if (errors.length > 0 || floor === 'review') decision = RANK[decision] >= 1 ? decision : 'review';
  return { decision, fired, errors, escalate };
}

const cases = fc.record({
  rules: fc.array(rule, { maxLength: 8 }),
  offsets: fc.array(offset, { maxLength: 3 }),
  t: thresholds,
  profileOffset: fc.double({ min: -0.3, max: 0.3, noNaN: true }),
  score,
});

describe('ruleset semantics (property)', () => {
  it('follows the actions table: order by action, allow/block end, review floors, offsets before thresholds', () => {
    fc.assert(
      fc.property(cases, (c) => {
        const got = run(c);
        const want = expected(c);
        assert.equal(got.decision, want.decision);
        assert.deepEqual(
          got.rules.map((r) => r.id),
          want.fired,
        );
        assert.deepEqual(
          got.errors.map((e) => e.ruleId),
          want.errors,
        );
        assert.equal(got.escalate, want.escalate);
      }),
      { numRuns: 300 },
    );
  });

  it('fails closed: a runtime error or no valid score never approves', () => {
    fc.assert(
      fc.property(cases, (c) => {
        const got = run(c);
        if (got.errors.length > 0 || c.score === null) assert.notEqual(got.decision, 'approve');
      }),
      { numRuns: 300 },
    );
  });

  it('a firing block declines unless an allow fired first; a firing review never lowers the decision', () => {
    fc.assert(
      fc.property(cases, fc.constantFrom<Action>('block', 'review'), (c, action) => {
        const before = run(c);
        const after = run({ ...c, rules: [...c.rules, { action, b: 'fires' }] });
        if (before.rules.some((r) => r.action === 'allow' || r.action === 'block')) {
          assert.equal(after.decision, before.decision);
          return;
        }
        if (action === 'block') assert.equal(after.decision, 'decline');
        else assert.ok(RANK[after.decision] >= RANK[before.decision] && after.decision !== 'approve');
      }),
      { numRuns: 200 },
    );
  });
});
