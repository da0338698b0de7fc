import { FEATURE_COUNT, featurize, RISKY_MCC } from '../features/featurizer';
import type { UserContext, UserProfile } from '../domain/user-context';
import type { PaymentEvent } from '../domain/payment-event';
import { Prng } from './prng';
import { cents, drawAmount, drawLabel, drawVelocity, isAttack, type Scenario } from './synthetic-draws';

export type { Scenario } from './synthetic-draws';

/**
 * Seeded synthetic payments for training and testing the fraud model.
 *
 * Each sample is one payment of its own user (a profile is drawn per sample; ~15 % of users have no profile).
 * A sample first gets a **scenario**: mostly legitimate behaviour, some legitimate-but-unusual behaviour (which
 * produces false-positive-looking events), and ~7 % "attack" scenarios that make the fraud patterns below likely:
 *
 * - **Amount far above usual** — account takeover, stolen cards and new-account fraud spend 3–10× the user's
 *   usual amount (legit "big purchases" do too, sometimes).
 * - **Burst velocity** — card testing: many small payments within a minute/hour.
 * - **New device** — account takeover and card testing come from devices not known on the account (legit users
 *   change phones too).
 * - **Card country ≠ IP country** — attackers behind foreign IPs or proxies (legit VPN users occasionally).
 * - **Foreign country vs home / several countries in 24 h** — stolen cards used abroad (legit travellers too).
 * - **Risky merchant category** ({@link RISKY_MCC}: gambling, money transfer, crypto, stored value…).
 * - **Unusual hour** — attacks are more frequent at local night (00:00–05:00).
 * - **New account / no profile** — new-account fraud uses accounts a few days old or with no history.
 *
 * The **label** is not a rule on these features: a latent risk logit sums the pattern contributions (with two
 * interactions and a saturating amount term), an unobserved "intent" bonus for attack scenarios and Gaussian
 * noise (σ = 1, standing for everything the features cannot see); the label is a Bernoulli draw of its
 * sigmoid. The overall fraud rate is ≈ 4 % and a logistic model reaches a hold-out ROC AUC around 0.93–0.95,
 * never 1.
 */

/** Scenario weights (probabilities). Attack scenarios total 7 %. */
export const SCENARIO_WEIGHTS: readonly (readonly [Scenario, number])[] = [
  ['normal', 0.82],
  ['traveller', 0.05],
  ['big_purchase', 0.03],
  ['new_phone', 0.03],
  ['account_takeover', 0.024],
  ['card_testing', 0.018],
  ['stolen_card_abroad', 0.017],
  ['new_account_fraud', 0.011],
];

/** One labelled synthetic payment. */
export interface SyntheticSample {
  readonly event: PaymentEvent;
  readonly context: UserContext;
  readonly fraud: boolean;
  readonly scenario: Scenario;
}

/** Country → [currency, UTC offset in minutes, weight as a home country]. */
const COUNTRIES: Readonly<Record<string, readonly [string, number, number]>> = {
  FR: ['EUR', 60, 25],
  DE: ['EUR', 60, 15],
  GB: ['GBP', 0, 12],
  US: ['USD', -300, 15],
  ES: ['EUR', 60, 8],
  IT: ['EUR', 60, 8],
  NL: ['EUR', 60, 5],
  CA: ['CAD', -300, 4],
  BR: ['BRL', -180, 3],
  IN: ['INR', 330, 3],
  JP: ['JPY', 540, 2],
  NG: ['NGN', 60, 0],
  RU: ['RUB', 180, 0],
  CN: ['CNY', 480, 0],
  VN: ['VND', 420, 0],
};
const HOME_COUNTRIES = Object.entries(COUNTRIES).map(([c, [, , w]]) => [c, w] as const);
const ALL_COUNTRIES = Object.keys(COUNTRIES);
const COMMON_MCC = ['5411', '5812', '5541', '5999', '4111', '5732', '5311', '4121', '7011', '5651', '5912', '5814'];
const RISKY = [...RISKY_MCC];
/** Relative frequency of legitimate payments per local hour 0–23. */
const DAY_CURVE = [1, 0.6, 0.4, 0.3, 0.4, 0.8, 2, 4, 6, 7, 7, 8, 9, 8, 7, 7, 8, 9, 9, 8, 6, 4, 3, 2].map(
  (w, h) => [h, w] as const,
);
/** First calendar day of the synthetic timeline (UTC ms); events span 120 days from here. */
const EPOCH_MS = Date.UTC(2025, 2, 1);
const DAY_MS = 86_400_000;

const CHANNEL_WEIGHTS: readonly (readonly [PaymentEvent['channel'], number])[] = [
  ['pos', 0.45],
  ['app', 0.35],
  ['web', 0.2],
];
/** Probability that a web/app payment's IP country differs from the payment country (others: 3 %). */
const IP_MISMATCH_P: Partial<Record<Scenario, number>> = {
  account_takeover: 0.55,
  card_testing: 0.4,
  stolen_card_abroad: 0.5,
  new_account_fraud: 0.35,
};
/** Probability of a risky MCC (others: 3 %). */
const RISKY_MCC_P: Partial<Record<Scenario, number>> = {
  card_testing: 0.35,
  account_takeover: 0.25,
  new_account_fraud: 0.55,
  stolen_card_abroad: 0.2,
};

const pad = (n: number, w = 2): string => String(n).padStart(w, '0');

/** ISO timestamp with the country's zone offset, for a local day index and local time of day (seconds). */
function localTimestamp(day: number, secondOfDay: number, offsetMin: number): { iso: string; utcMs: number } {
  const localMs = EPOCH_MS + day * DAY_MS + secondOfDay * 1000;
  const d = new Date(localMs);
  const body = `${d.getUTCFullYear()}-${pad(d.getUTCMonth() + 1)}-${pad(d.getUTCDate())}T${pad(d.getUTCHours())}:${pad(d.getUTCMinutes())}:${pad(d.getUTCSeconds())}`;
  const sign = offsetMin < 0 ? '-' : '+';
  const abs = Math.abs(offsetMin);
  const zone = offsetMin === 0 ? 'Z' : `${sign}${pad(Math.floor(abs / 60))}:${pad(abs % 60)}`;
  return { iso: body + zone, utcMs: localMs - offsetMin * 60_000 };
}

function otherCountry(rng: Prng, not: string): string {
  let c = rng.pick(ALL_COUNTRIES);
  while (c === not) c = rng.pick(ALL_COUNTRIES);
  return c;
}

/** How the payment reached the merchant: channel, payment country, IP country and device (`id`: the sample's). */
function drawAccess(
  rng: Prng,
  scenario: Scenario,
  home: string,
  knownDevices: readonly string[],
  id: string,
): { channel: PaymentEvent['channel']; country: string; ipCountry?: string; deviceId?: string } {
  const channel: PaymentEvent['channel'] =
    scenario === 'card_testing' || scenario === 'account_takeover' || scenario === 'new_account_fraud'
      ? rng.chance(0.7)
        ? 'web'
        : 'app'
      : rng.weighted(CHANNEL_WEIGHTS);
  const abroad =
    scenario === 'traveller' || (scenario === 'stolen_card_abroad' && rng.chance(0.85)) || rng.chance(0.02);
  const country = abroad ? otherCountry(rng, home) : home;
  if (channel === 'pos')
    return rng.chance(0.1) ? { channel, country, deviceId: rng.pick(knownDevices) } : { channel, country };
  const ipCountry = rng.chance(IP_MISMATCH_P[scenario] ?? 0.03) ? otherCountry(rng, country) : country;
  const missingP = scenario === 'card_testing' ? 0.5 : 0.04;
  const newP = isAttack(scenario) ? 0.85 : scenario === 'new_phone' ? 1 : 0.05;
  const deviceId = rng.chance(missingP) ? undefined : rng.chance(newP) ? `dev-new-${id}` : rng.pick(knownDevices);
  return deviceId === undefined ? { channel, country, ipCountry } : { channel, country, ipCountry, deviceId };
}

/** Draws one labelled payment. `i` makes ids unique within a data set. */
function drawSample(rng: Prng, i: number, seed: number): SyntheticSample {
  const scenario = rng.weighted(SCENARIO_WEIGHTS);
  const attack = isAttack(scenario);
  const userId = `user-${seed}-${i}`;
  const home = rng.weighted(HOME_COUNTRIES);
  const usual = cents(rng.logNormal(Math.log(45), 0.7));
  let hasProfile = !rng.chance(0.15) || scenario === 'account_takeover' || scenario === 'stolen_card_abroad';
  if (scenario === 'new_account_fraud') hasProfile = rng.chance(0.5);
  const ageDays =
    scenario === 'new_account_fraud'
      ? rng.uniform(0, 5)
      : rng.chance(0.03)
        ? rng.uniform(0, 14)
        : Math.min(5000, 1 + rng.logNormal(Math.log(500), 1));
  const knownDevices = Array.from({ length: rng.int(1, 3) }, (_v, k) => `dev-${seed}-${i}-${k}`);

  // Channel, payment country, IP country, device.
  const { channel, country, ipCountry, deviceId } = drawAccess(rng, scenario, home, knownDevices, `${seed}-${i}`);

  // Amount, merchant, hour.
  const amount = drawAmount(rng, scenario, usual);
  const mcc = rng.chance(RISKY_MCC_P[scenario] ?? 0.03) ? rng.pick(RISKY) : rng.pick(COMMON_MCC);
  const nightP = attack ? 0.35 : 0;
  const hour = rng.chance(nightP) ? rng.int(0, 4) : rng.weighted(DAY_CURVE);
  const [currency, offset] = COUNTRIES[country] ?? ['EUR', 0];
  const ts = localTimestamp(rng.int(0, 119), hour * 3600 + rng.int(0, 3599), offset);

  // Velocity before this payment.
  const velocity = drawVelocity(rng, scenario, usual, country !== home);

  const profile: UserProfile | null = hasProfile
    ? {
        homeCountry: home,
        usualAmount: usual,
        knownDevices,
        accountCreatedAt: new Date(ts.utcMs - ageDays * DAY_MS).toISOString(),
      }
    : null;
  const event: PaymentEvent = {
    transactionId: `tx-${seed}-${i}`,
    userId,
    ...(channel === 'pos' ? {} : { sessionId: `sess-${seed}-${i}` }),
    amount,
    currency,
    merchantId: `m-${mcc}-${rng.int(1, 500)}`,
    merchantCategory: mcc,
    country,
    ...(ipCountry === undefined ? {} : { ipCountry }),
    ...(deviceId === undefined ? {} : { deviceId }),
    channel,
    timestamp: ts.iso,
  };

  // Latent risk → label.
  const newDevice = deviceId !== undefined && !(profile?.knownDevices ?? []).includes(deviceId);
  const fraud = drawLabel(rng, {
    attack,
    vsUsual: Math.log((amount + 1) / (usual + 1)),
    velocity,
    newDevice,
    hasProfile,
    noDevice: channel !== 'pos' && deviceId === undefined,
    ipMismatch: ipCountry !== undefined && ipCountry !== country,
    abroad: country !== home,
    riskyMcc: RISKY_MCC.has(mcc),
    night: hour < 5,
    newAccount: hasProfile && ageDays < 7,
  });
  return { event, context: { profile, velocity }, fraud, scenario };
}

/** Options of {@link generatePayments}. */
export interface GenerateOptions {
  /** PRNG seed; the same seed and count give the same samples. */
  readonly seed: number;
  /** Number of samples. */
  readonly count: number;
}

/** Draws `count` labelled synthetic payments (see the module documentation for the patterns). */
export function generatePayments(opts: GenerateOptions): SyntheticSample[] {
  const rng = new Prng(opts.seed);
  const out: SyntheticSample[] = [];
  for (let i = 0; i < opts.count; i++) out.push(drawSample(rng, i, opts.seed));
  return out;
}

/** A featurized data set: `x` is `n × FEATURE_COUNT` row-major float32, `y` the 0/1 labels. */
export interface Dataset {
  readonly x: Float32Array;
  readonly y: Uint8Array;
  readonly n: number;
}

/** Featurizes samples with the production featurizer (same code path as scoring). */
export function featurizeSamples(samples: readonly SyntheticSample[]): Dataset {
  const x = new Float32Array(samples.length * FEATURE_COUNT);
  const y = new Uint8Array(samples.length);
  samples.forEach((s, i) => {
    featurize(s.event, s.context, x, i * FEATURE_COUNT);
    y[i] = s.fraud ? 1 : 0;
  });
  return { x, y, n: samples.length };
}
