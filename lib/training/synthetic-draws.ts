/** The draws of one synthetic payment that depend on its scenario: amount, earlier payments, and its label. */
import type { Velocity } from '../domain/user-context';
import type { Prng } from './prng';

/** Behaviour a synthetic payment was drawn from (the first four are legitimate-leaning). */
export type Scenario =
  | 'normal'
  | 'traveller'
  | 'big_purchase'
  | 'new_phone'
  | 'account_takeover'
  | 'card_testing'
  | 'stolen_card_abroad'
  | 'new_account_fraud';

/** An amount in cents precision, at least 0.01. */
export const cents = (x: number): number => Math.max(0.01, Math.round(x * 100) / 100);

/** Whether a scenario is an attack (fraud-leaning). */
export const isAttack = (s: Scenario): boolean =>
  s === 'account_takeover' || s === 'card_testing' || s === 'stolen_card_abroad' || s === 'new_account_fraud';

/** The amount of a payment of `scenario` by a user whose usual amount is `usual`. */
export function drawAmount(rng: Prng, scenario: Scenario, usual: number): number {
  if (scenario === 'card_testing') return cents(rng.uniform(0.5, 10));
  if (scenario === 'new_account_fraud') return cents(rng.logNormal(Math.log(300), 0.8));
  if (isAttack(scenario)) return cents(usual * rng.logNormal(Math.log(4), 0.7));
  if (scenario === 'big_purchase') return cents(usual * rng.logNormal(Math.log(6), 0.5));
  return cents(usual * rng.logNormal(0, 0.6));
}

/** The user's payments before this one (counts, sum, distinct countries: home, plus this one's when `abroad`). */
export function drawVelocity(rng: Prng, scenario: Scenario, usual: number, abroad: boolean): Velocity {
  let count24h = rng.poisson(1.5);
  let count1h = Math.min(count24h, rng.poisson(0.2));
  let count1m = Math.min(count1h, rng.chance(0.02) ? 1 : 0);
  if (scenario === 'card_testing') {
    count1m = rng.int(2, 12);
    count1h = count1m + rng.int(3, 30);
    count24h = count1h + rng.poisson(3);
  } else if (isAttack(scenario) && rng.chance(0.4)) {
    count1h += rng.int(1, 3);
    count24h += count1h;
  }
  const sum24h =
    scenario === 'card_testing' ? count24h * rng.uniform(0.5, 10) : count24h * usual * rng.logNormal(0, 0.4);
  // Distinct countries among the earlier payments (≤ their count): home plus the current one when abroad.
  const countries = Math.min(count24h, abroad ? rng.int(2, scenario === 'stolen_card_abroad' ? 4 : 2) : 1);
  return { count1m, count1h, count24h, sum24h: count24h === 0 ? 0 : cents(sum24h), distinctCountries24h: countries };
}

/** What the latent risk of a payment weighs. */
export interface RiskFactors {
  readonly attack: boolean;
  /** ln((amount + 1) / (usual + 1)). */
  readonly vsUsual: number;
  readonly velocity: Velocity;
  readonly newDevice: boolean;
  readonly hasProfile: boolean;
  readonly noDevice: boolean;
  readonly ipMismatch: boolean;
  readonly abroad: boolean;
  readonly riskyMcc: boolean;
  readonly night: boolean;
  readonly newAccount: boolean;
}

/** Whether the payment is fraud: a logistic draw over its latent risk (with noise). */
export function drawLabel(rng: Prng, f: RiskFactors): boolean {
  const bigAmount = Math.log1p(Math.exp(2 * (f.vsUsual - 0.8))) / 2; // softplus: ~0 below 2× usual, then linear
  const [newDevice, ipMismatch, night] = [Number(f.newDevice), Number(f.ipMismatch), Number(f.night)];
  const z =
    -6.8 +
    3.5 * Number(f.attack) +
    0.9 * bigAmount +
    0.8 * Math.log1p(f.velocity.count1m) +
    0.35 * Math.log1p(f.velocity.count1h) +
    0.9 * newDevice * Number(f.hasProfile) +
    0.3 * Number(f.noDevice) +
    0.8 * ipMismatch +
    0.6 * Number(f.abroad && f.hasProfile) +
    0.4 * Number(f.velocity.distinctCountries24h >= 2) +
    1.0 * Number(f.riskyMcc) +
    0.6 * night +
    0.8 * Number(f.newAccount) +
    0.5 * Number(!f.hasProfile) +
    0.7 * newDevice * ipMismatch +
    0.5 * night * bigAmount +
    rng.normal(0, 1);
  return rng.next() < 1 / (1 + Math.exp(-z));
}
