/**
 * One scoring pipeline: a payment is a batch of one. `score()` honours every option `scoreBatch()` does
 * (`contextTimeoutMs` among them), single and batch give identical results and `decided` events for the same
 * events (property), and rules read features by name through the view compiled once per feature list.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import type { ContextProvider, LookupOptions } from '../../lib/context/context-provider';
import { compileRuleset } from '../../lib/decisioning/compile-ruleset';
import { Decisioning } from '../../lib/decisioning/decisioning';
import { ListLookup } from '../../lib/decisioning/list-lookup';
import { MemoryListStore } from '../../lib/decisioning/list-store';
import { parsePaymentEvent, type PaymentEvent } from '../../lib/domain/payment-event';
import { NO_HISTORY, type UserContext } from '../../lib/domain/user-context';
import { featureView, FeaturesUnbound } from '../../lib/features/feature-view';
import { FEATURE_COUNT, FEATURE_NAMES } from '../../lib/features/featurizer';
import type { InferenceBackend } from '../../lib/inference/backend';
import type { SessionManager } from '../../lib/inference/session-manager';
import type { Lease } from '../../lib/inference/version-leases';
import type { ModelManifest } from '../../lib/models/manifest';
import { Scorer, type DecidedPayment, type RequestRouter, type ScorerDeps } from '../../lib/scoring/scorer';
import { fakeBackendFactory, fakeModelSource } from '../context/fake-model';
import { validEvent } from '../support/events';

/** A context store that answers after `latencyMs` (simulated, no real time): degraded when the budget is shorter. */
class SlowContext implements ContextProvider {
  readonly budgets: (number | undefined)[] = [];
  constructor(
    private readonly latencyMs: number,
    private readonly defaultBudgetMs: number,
    private readonly contextOf: (e: PaymentEvent) => UserContext = () => NO_HISTORY,
  ) {}
  lookup(event: PaymentEvent, options?: LookupOptions) {
    this.budgets.push(options?.timeoutMs);
    const budget = options?.timeoutMs ?? this.defaultBudgetMs;
    return Promise.resolve(
      budget < this.latencyMs
        ? { context: NO_HISTORY, cache: 'degraded' as const }
        : { context: this.contextOf(event), cache: 'miss' as const },
    );
  }
  dispose = () => Promise.resolve();
}

const RULES = {
  name: 'feature-rules',
  version: '1.0.0',
  lists: [{ name: 'blocked_devices', key: 'deviceId' }],
  rules: [
    { id: 'big', when: 'features.amount_log > 9.0', action: 'block' },
    { id: 'new-device', when: '"new_device" in features && features["new_device"] == 1.0', action: 'review' },
    { id: 'all-features', when: `size(features) != ${FEATURE_COUNT}`, action: 'review' },
    { id: 'blocked', when: 'in_list("blocked_devices", event.deviceId)', action: 'block' },
  ],
};

async function backend(offset = 0): Promise<InferenceBackend> {
  const b = await fakeBackendFactory.load({
    inputName: 'features',
    outputName: 'score',
    inputWidth: FEATURE_COUNT,
    bytes: new Uint8Array(),
  });
  if (offset === 0) return b;
  return {
    ...b,
    run: async (input, rows, o) => {
      const r = await b.run(input, rows, o);
      return { ...r, scores: r.scores.map((s) => Math.min(1, s + offset)) };
    },
  };
}

async function setup(over: Partial<ScorerDeps> = {}, withRules = true) {
  const store = new MemoryListStore();
  await store.add('blocked_devices', ['dev-bad']);
  const { manifest } = await fakeModelSource.load();
  const stable = await backend();
  const candidate = await backend(0.2);
  const candidateManifest: ModelManifest = { ...manifest, version: '1.1.0' };
  const lease = (m: ModelManifest, b: InferenceBackend): Lease => ({
    manifest: m,
    backend: b,
    release: () => undefined,
  });
  const sessions = { acquire: () => lease(manifest, stable) } as unknown as SessionManager;
  const shadows: string[] = [];
  // canary: users whose id ends in 7 go to the candidate; every payment is shadow-scored
  const router: RequestRouter = {
    acquire: (u) => (u.endsWith('7') ? lease(candidateManifest, candidate) : lease(manifest, stable)),
    shadow: (key, rowFor, served) =>
      shadows.push(`${key}:${served.version}:${served.score}:${rowFor(candidateManifest).join(',')}`),
  };
  const decided: DecidedPayment[] = [];
  const invalid: number[] = [];
  const scorer = new Scorer({
    sessions,
    router,
    context: new SlowContext(0, 100),
    deadlineMs: 1000,
    now: () => 0,
    ...(withRules
      ? {
          decisioning: new Decisioning(
            new ListLookup(store, { maxEntries: 100, ttlMs: 60_000 }),
            compileRuleset(RULES),
          ),
        }
      : {}),
    on: { decided: (d) => decided.push({ ...d, row: d.row.slice() }), invalidScore: (e) => invalid.push(e.rows) },
    ...over,
  });
  return { scorer, decided, shadows, invalid };
}

describe('one pipeline: score() is scoreBatch() of one', () => {
  it('score() honours contextTimeoutMs: a store slower than the budget degrades, as in scoreBatch()', async () => {
    const context = new SlowContext(50, 100); // the store answers in 50 ms; the provider's default budget is 100
    const { scorer } = await setup({ context });
    const e = parsePaymentEvent(validEvent());
    assert.equal((await scorer.score(e)).cache, 'miss', 'default budget (100 ms) ≥ 50 ms');
    assert.equal(
      (await scorer.score(e, { contextTimeoutMs: 10 })).cache,
      'degraded',
      'the 10 ms budget reached the store',
    );
    assert.equal((await scorer.scoreBatch([e], { contextTimeoutMs: 10 }))[0]?.cache, 'degraded');
    assert.deepEqual(context.budgets, [undefined, 10, 10], 'each lookup got the budget of its call');
  });

  it('rules read features by name (field, index, `in`, size)', async () => {
    const { scorer } = await setup();
    const big = await scorer.score(parsePaymentEvent(validEvent({ amount: 20_000, transactionId: 't-big' })));
    assert.equal(big.decision, 'decline');
    assert.deepEqual(big.rules, [{ id: 'big', action: 'block' }]);
    const small = await scorer.score(parsePaymentEvent(validEvent({ amount: 10, transactionId: 't-small' })));
    assert.deepEqual(small.rules, [{ id: 'new-device', action: 'review' }], 'no profile: the device is new');
    assert.equal(small.ruleErrors, undefined, 'no rule failed reading a feature');
    assert.equal(small.decision, 'review');
  });

  it('the features view is readable only inside its decision, and nests', () => {
    const view = featureView(FEATURE_NAMES);
    const a = new Float32Array(FEATURE_COUNT).fill(1);
    const b = new Float32Array(FEATURE_COUNT).fill(2);
    let kept: Readonly<Record<string, number>> | undefined;
    const seen = view.with(a, (f) => {
      kept = f;
      const inner = view.with(b, (g) => g['amount_log']);
      return [f['amount_log'], inner, f[FEATURE_NAMES[FEATURE_COUNT - 1] as string], Object.keys(f).length];
    });
    assert.deepEqual(seen, [1, 2, 1, FEATURE_COUNT]);
    assert.throws(() => kept?.['amount_log'], FeaturesUnbound);
  });

  const eventArb = fc
    .record({
      amount: fc.double({ min: 0.01, max: 50_000, noNaN: true }),
      user: fc.integer({ min: 0, max: 9 }),
      device: fc.option(fc.constantFrom('dev-a', 'dev-b', 'dev-bad'), { nil: undefined }),
      country: fc.constantFrom('FR', 'DE', 'US'),
      ipCountry: fc.option(fc.constantFrom('FR', 'NG'), { nil: undefined }),
      mcc: fc.constantFrom('5411', '7995', '4829'),
      channel: fc.constantFrom('web', 'app', 'pos'),
    })
    .map((r) => ({ ...r, amount: Math.round(r.amount * 100) / 100 }));
  /** A user's history: a profile for even users, velocity from the id (deterministic). */
  const contextOf = (e: PaymentEvent): UserContext => {
    const n = Number(e.userId.slice(2));
    return {
      profile:
        n % 2 === 0
          ? {
              homeCountry: 'FR',
              usualAmount: 40 + n,
              knownDevices: ['dev-a'],
              accountCreatedAt: '2025-01-01T00:00:00Z',
            }
          : null,
      velocity: { count1m: n % 3, count1h: n, count24h: 2 * n, sum24h: 100 * n, distinctCountries24h: n % 4 },
    };
  };

  for (const withRules of [true, false])
    it(`property: single and batch give identical results and decided events (${withRules ? 'with' : 'without'} a ruleset)`, async () => {
      await fc.assert(
        fc.asyncProperty(fc.array(eventArb, { minLength: 1, maxLength: 8 }), async (specs) => {
          const events = specs.map((s, i) =>
            parsePaymentEvent(
              validEvent({
                transactionId: `t-${i}`,
                userId: `u-${s.user}`,
                amount: s.amount,
                country: s.country,
                merchantCategory: s.mcc,
                channel: s.channel,
                deviceId: s.device,
                ipCountry: s.ipCountry,
              }),
            ),
          );
          const one = await setup({ context: new SlowContext(0, 100, contextOf) }, withRules);
          const many = await setup({ context: new SlowContext(0, 100, contextOf) }, withRules);
          const singles = [];
          for (const e of events) singles.push(await one.scorer.score(e));
          const batch = await many.scorer.scoreBatch(events);
          const untimed = <T extends { timing: unknown }>(r: T) => ({ ...r, timing: undefined });
          assert.deepEqual(batch.map(untimed), singles.map(untimed));
          const view = (d: DecidedPayment) => ({ ...d, result: untimed(d.result), row: [...d.row] });
          assert.deepEqual(many.decided.map(view), one.decided.map(view));
          assert.deepEqual([...many.shadows].sort(), [...one.shadows].sort());
          assert.equal(one.invalid.length, 0);
        }),
        { numRuns: 40 },
      );
    });
});
