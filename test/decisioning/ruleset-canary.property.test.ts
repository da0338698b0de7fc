/**
 * The ruleset canary split, property-tested: a user's version depends only on the userId and the share (the
 * same on two independently built instances, and on repeated calls), a user in the canary at p % stays in it
 * at any higher share, and the share of users in the canary matches the percentage within tolerance.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Decisioning } from '../../lib/decisioning/decisioning';
import { ListLookup } from '../../lib/decisioning/list-lookup';
import { MemoryListStore } from '../../lib/decisioning/list-store';
import { loadRuleset } from '../../lib/decisioning/load-ruleset';
import { GOLDEN_THRESHOLDS } from '../../lib/decisioning/ruleset-rollout';
import { inRulesetCanary } from '../../lib/decisioning/ruleset-traffic';

const ROOT = path.resolve(__dirname, '../../..');
const SHIPPED = readFileSync(path.join(ROOT, 'rulesets/fraud-rules/1.0.0.json'), 'utf8');
const CANDIDATE = JSON.stringify({ ...(JSON.parse(SHIPPED) as Record<string, unknown>), version: '1.1.0' });

/** One instance's decisioning with the shipped ruleset active and 1.1.0 as candidate at `canaryPercent`. */
function instance(canaryPercent: number): Decisioning {
  const d = new Decisioning(
    new ListLookup(new MemoryListStore(), { maxEntries: 10, ttlMs: 1000 }),
    loadRuleset(SHIPPED, GOLDEN_THRESHOLDS),
  );
  d.setCandidate(loadRuleset(CANDIDATE, GOLDEN_THRESHOLDS), { candidate: '1.1.0', canaryPercent, shadowPercent: 0 });
  return d;
}

const userId = fc.string({ minLength: 1, maxLength: 128 });
const percent = fc.integer({ min: 0, max: 10_000 }).map((x) => x / 100);

describe('ruleset canary split (property)', () => {
  it('is stable per user: two instances and repeated calls agree, and it follows inRulesetCanary', () => {
    fc.assert(
      fc.property(percent, fc.array(userId, { minLength: 1, maxLength: 20 }), (p, users) => {
        const [a, b] = [instance(p), instance(p)];
        for (const u of users) {
          const v = a.versionFor(u);
          assert.equal(b.versionFor(u), v, `instances disagree on ${JSON.stringify(u)} at ${p} %`);
          assert.equal(a.versionFor(u), v, 'repeated call');
          assert.equal(v, inRulesetCanary(u, p) ? '1.1.0' : '1.0.0');
        }
      }),
    );
  });

  it('is monotone in the share: a canary user at p % stays one at any higher share; 0 % none, 100 % all', () => {
    fc.assert(
      fc.property(userId, percent, percent, (u, x, y) => {
        const [lo, hi] = x <= y ? [x, y] : [y, x];
        if (inRulesetCanary(u, lo)) assert.ok(inRulesetCanary(u, hi), `${lo} % ⊂ ${hi} %`);
        assert.equal(inRulesetCanary(u, 0), false);
        assert.equal(inRulesetCanary(u, 100), true);
      }),
    );
  });

  it('puts the configured share of users in the canary, within tolerance', () => {
    const n = 4000;
    fc.assert(
      fc.property(fc.string({ maxLength: 16 }), percent, (prefix, p) => {
        let inside = 0;
        for (let i = 0; i < n; i++) if (inRulesetCanary(`${prefix}user-${i}`, p)) inside++;
        const share = inside / n;
        const q = p / 100;
        // 6 standard deviations of a binomial share, plus the 0.01 % bucket resolution
        const tolerance = 6 * Math.sqrt((q * (1 - q)) / n) + 0.0001;
        assert.ok(Math.abs(share - q) <= tolerance, `${p} %: ${inside} of ${n} users (${(share * 100).toFixed(2)} %)`);
      }),
      { numRuns: 50 },
    );
  });

  it('prepares the version the split names for the event’s user', async () => {
    await fc.assert(
      fc.asyncProperty(percent, userId, async (p, u) => {
        const d = instance(p);
        const prepared = await d.prepare({ userId: u, transactionId: 't-1' });
        assert.equal(prepared?.ruleset.version, d.versionFor(u));
      }),
      { numRuns: 50 },
    );
  });
});
