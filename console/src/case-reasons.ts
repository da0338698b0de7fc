/**
 * Why a payment was held, for people: each of the model's top reasons by the feature's name and a plain definition,
 * its contribution drawn as a bar (the largest reason fills it) with how much it multiplies the odds of fraud; the
 * formulas and log-odds stay one click away ("How the model measured it").
 */
import { h } from './dom.js';
import type { Reason } from './types.js';

/** A signal's name and meaning in plain words. */
export interface Plain {
  readonly name: string;
  readonly meaning: string;
}

/** The shipped features (lib/features/featurizer.ts) in plain words. */
const GLOSSARY: Readonly<Record<string, Plain>> = {
  amount_log: { name: 'Amount', meaning: 'How large the amount is: the larger, the more it weighs.' },
  amount_vs_usual: {
    name: "Amount compared with the user's usual",
    meaning: 'How far the amount is above what this user usually pays (50 is assumed for a user with no history).',
  },
  velocity_1m: { name: 'Payments in the last minute', meaning: 'How many payments the user made in the last 60 s.' },
  velocity_1h: { name: 'Payments in the last hour', meaning: 'How many payments the user made in the last hour.' },
  velocity_24h: {
    name: 'Payments in the last 24 hours',
    meaning: 'How many payments the user made in the last 24 hours.',
  },
  amount_sum_24h_log: {
    name: 'Spent in the last 24 hours',
    meaning: "The total of the user's payments in the last 24 hours.",
  },
  distinct_countries_24h: {
    name: 'Countries in the last 24 hours',
    meaning: 'How many different countries the user paid from in the last 24 hours.',
  },
  new_device: { name: 'New device', meaning: 'The payment came from a device this user has not used before.' },
  device_missing: { name: 'No device', meaning: 'The payment did not say which device it came from.' },
  ip_country_mismatch: {
    name: 'IP address in another country',
    meaning: "The payment's IP address is in another country than the card's.",
  },
  foreign_country: { name: 'Away from home', meaning: "The payment's country is not the user's home country." },
  risky_mcc: {
    name: 'Risky merchant category',
    meaning: 'Gambling, money transfer, crypto, stored value, direct marketing, dating or jewellery.',
  },
  night_hour: { name: 'Night', meaning: 'Paid between midnight and 5 am, in the payment’s own time zone.' },
  account_age_log: {
    name: 'Account age',
    meaning: "How long the user's account has existed (none known for a user with no history).",
  },
  channel_web: { name: 'Paid on the web', meaning: 'The payment was made on a website.' },
  channel_app: { name: 'Paid in the app', meaning: 'The payment was made in a mobile app.' },
  has_profile: { name: 'Known user', meaning: 'The service has a history for this user.' },
  model_output_invalid: { name: 'No valid score', meaning: 'The model gave no usable score, so a person decides.' },
};

/** `card_users_1h` as `Card users 1h`. */
function words(code: string): string {
  const s = code.replace(/[_-]+/g, ' ').trim();
  return s.charAt(0).toUpperCase() + s.slice(1);
}

/**
 * A signal's plain name and meaning: the shipped features from the glossary; another signal by its name in words,
 * and the description its document gave (the part after ` — `), else its definition as it is.
 */
export function plain(code: string, definition: string): Plain {
  const known = GLOSSARY[code];
  if (known !== undefined) return known;
  if (code.startsWith('rule:')) return { name: `Rule ${code.slice(5)}`, meaning: definition };
  const i = definition.lastIndexOf(' — ');
  return { name: words(code), meaning: i < 0 ? definition : definition.slice(i + 3) };
}

/** How a contribution (log-odds) reads: the odds of fraud it multiplies by. */
export function oddsText(contribution: number): string {
  const x = Math.exp(contribution);
  return `odds of fraud × ${x >= 10 ? x.toFixed(0) : x.toFixed(1)}`;
}

function bar(share: number): HTMLElement {
  const fill = h('span', { class: 'bar-fill' });
  // CSSOM, not a style attribute: the console's CSP allows no inline style
  fill.style.width = `${Math.max(2, Math.round(share * 100))}%`;
  return h('span', { class: 'bar', 'aria-hidden': 'true' }, fill);
}

/** The reasons list: one item per reason that raised the risk, largest first, with its bar. */
export function reasonsView(reasons: readonly Reason[]): HTMLElement {
  const model = reasons.filter((r) => r.contribution > 0).sort((a, b) => b.contribution - a.contribution);
  if (model.length === 0)
    return h('p', { id: 'reasons-none' }, 'The model named no reason that raised the risk (see the rules below).');
  const top = model[0]?.contribution ?? 1;
  return h(
    'div',
    { id: 'reasons' },
    h(
      'ol',
      { class: 'reasons', 'aria-label': "The model's top reasons, strongest first" },
      model.map((r) => {
        const p = plain(r.code, r.description);
        return h(
          'li',
          {},
          h('span', { class: 'reason-name' }, p.name),
          h('span', { class: 'reason-weight' }, bar(r.contribution / top), oddsText(r.contribution)),
          h('span', { class: 'reason-meaning' }, p.meaning),
        );
      }),
    ),
    h(
      'details',
      { class: 'formulas' },
      h('summary', {}, 'How the model measured it'),
      h(
        'ul',
        {},
        model.map((r) =>
          h(
            'li',
            {},
            h('code', {}, r.code),
            `: ${r.description}; contribution ${r.contribution.toFixed(3)} (log-odds)`,
          ),
        ),
      ),
    ),
  );
}
