import type { PaymentEvent } from '../domain/payment-event';
import type { UserContext } from '../domain/user-context';

/**
 * Merchant category codes treated as risky: gambling, money transfer, quasi-cash/crypto, stored value,
 * direct-marketing, dating, and jewellery.
 */
export const RISKY_MCC: ReadonlySet<string> = new Set(['7995', '4829', '6051', '6540', '5967', '7273', '5944', '5966']);

/** Usual amount assumed for a user with no profile, in currency units. */
export const DEFAULT_USUAL_AMOUNT = 50;

/** One model input feature: its name (stable, in the manifest) and how it is computed. */
export interface FeatureDefinition {
  readonly name: string;
  readonly definition: string;
  readonly compute: (event: PaymentEvent, ctx: UserContext, localHour: number) => number;
}

const log1p = Math.log1p;

/**
 * The ordered feature list of the fraud model. The order is the model's input order; the manifest records
 * the same names and definitions. A user with no history (profile `null`) gets: usual amount
 * {@link DEFAULT_USUAL_AMOUNT}, no known devices, no foreign-country flag, account age 0 and zero velocity.
 */
export const FEATURES: readonly FeatureDefinition[] = Object.freeze([
  { name: 'amount_log', definition: 'ln(1 + amount)', compute: (e) => log1p(e.amount) },
  {
    name: 'amount_vs_usual',
    definition: `ln((amount + 1) / (usualAmount + 1)); usualAmount = ${DEFAULT_USUAL_AMOUNT} without a profile`,
    compute: (e, c) => Math.log((e.amount + 1) / ((c.profile?.usualAmount ?? DEFAULT_USUAL_AMOUNT) + 1)),
  },
  {
    name: 'velocity_1m',
    definition: 'ln(1 + payments in the last 60 s)',
    compute: (_e, c) => log1p(c.velocity.count1m),
  },
  {
    name: 'velocity_1h',
    definition: 'ln(1 + payments in the last hour)',
    compute: (_e, c) => log1p(c.velocity.count1h),
  },
  {
    name: 'velocity_24h',
    definition: 'ln(1 + payments in the last 24 h)',
    compute: (_e, c) => log1p(c.velocity.count24h),
  },
  {
    name: 'amount_sum_24h_log',
    definition: 'ln(1 + sum of amounts in the last 24 h)',
    compute: (_e, c) => log1p(c.velocity.sum24h),
  },
  {
    name: 'distinct_countries_24h',
    definition: 'distinct payment countries in the last 24 h, capped at 10',
    compute: (_e, c) => Math.min(c.velocity.distinctCountries24h, 10),
  },
  {
    name: 'new_device',
    definition: "1 if deviceId is given and not among the profile's known devices (none without a profile), else 0",
    compute: (e, c) => (e.deviceId !== undefined && !(c.profile?.knownDevices ?? []).includes(e.deviceId) ? 1 : 0),
  },
  {
    name: 'device_missing',
    definition: '1 if no deviceId is given',
    compute: (e) => (e.deviceId === undefined ? 1 : 0),
  },
  {
    name: 'ip_country_mismatch',
    definition: '1 if ipCountry is given and differs from the card country',
    compute: (e) => (e.ipCountry !== undefined && e.ipCountry !== e.country ? 1 : 0),
  },
  {
    name: 'foreign_country',
    definition: "1 if country differs from the profile's home country (0 without a profile)",
    compute: (e, c) => (c.profile !== null && c.profile.homeCountry !== e.country ? 1 : 0),
  },
  {
    name: 'risky_mcc',
    definition: 'merchantCategory in the risky MCC set',
    compute: (e) => (RISKY_MCC.has(e.merchantCategory) ? 1 : 0),
  },
  {
    name: 'night_hour',
    definition: 'local hour of the timestamp (in its own offset) is in [0, 5)',
    compute: (_e, _c, h) => (h < 5 ? 1 : 0),
  },
  {
    name: 'account_age_log',
    definition: 'ln(1 + account age in days at the timestamp); 0 without a profile',
    compute: (e, c) => {
      if (c.profile === null) return 0;
      const days = (Date.parse(e.timestamp) - Date.parse(c.profile.accountCreatedAt)) / 86_400_000;
      return Number.isFinite(days) ? log1p(Math.max(0, days)) : 0;
    },
  },
  { name: 'channel_web', definition: '1 if channel is web', compute: (e) => (e.channel === 'web' ? 1 : 0) },
  { name: 'channel_app', definition: '1 if channel is app', compute: (e) => (e.channel === 'app' ? 1 : 0) },
  { name: 'has_profile', definition: '1 if the user has a profile', compute: (_e, c) => (c.profile === null ? 0 : 1) },
]);

/** Feature names in model input order. */
export const FEATURE_NAMES: readonly string[] = Object.freeze(FEATURES.map((f) => f.name));

/** Number of features (the model's input width). */
export const FEATURE_COUNT = FEATURES.length;

/**
 * Local hour (0–23) of an ISO 8601 timestamp in its own zone offset (`Z` = UTC).
 * Assumes the timestamp passed schema validation.
 */
export function localHour(timestamp: string): number {
  const utcMs = Date.parse(timestamp);
  const m = /([+-])(\d{2}):?(\d{2})$/.exec(timestamp);
  const offsetMin = m === null ? 0 : (m[1] === '-' ? -1 : 1) * (Number(m[2]) * 60 + Number(m[3]));
  return new Date(utcMs + offsetMin * 60_000).getUTCHours();
}

/**
 * Turns an event and its user context into the model's input row, in {@link FEATURE_NAMES} order.
 * @param out optional destination (length ≥ offset + {@link FEATURE_COUNT}), to fill batches without copies.
 */
export function featurize(event: PaymentEvent, ctx: UserContext, out?: Float32Array, offset = 0): Float32Array {
  const row = out ?? new Float32Array(FEATURE_COUNT);
  const hour = localHour(event.timestamp);
  for (let i = 0; i < FEATURES.length; i++) {
    const f = FEATURES[i] as FeatureDefinition;
    row[offset + i] = f.compute(event, ctx, hour);
  }
  return row;
}
