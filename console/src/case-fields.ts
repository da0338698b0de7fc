/**
 * The case page's "Payment" section: the payment's fields in a fixed order, in groups, each with a label for people
 * (amounts with their currency, countries and merchant categories by name, times in the reader's locale). A field
 * the schema does not know (none today) is listed last under its own name, so nothing the payment holds is hidden.
 */
import { h, when, type Child } from './dom.js';
import { money } from './queue.js';
import type { Payment } from './types.js';

/** One shown field: its label and how its value reads (`undefined`: not shown when absent). */
interface Field {
  readonly key: string;
  readonly label: string;
  readonly show?: (v: unknown, p: Payment) => string;
  /** Shown as "not sent" when absent (the fields fraud checks lean on). */
  readonly always?: boolean;
}

/** Merchant categories the model treats as risky, and a few common ones, by name. */
const MCC: Readonly<Record<string, string>> = {
  '4829': 'money transfer',
  '5411': 'grocery stores',
  '5812': 'restaurants',
  '5944': 'jewellery',
  '5966': 'outbound telemarketing',
  '5967': 'direct marketing',
  '5999': 'other retail',
  '6051': 'quasi-cash, crypto',
  '6540': 'stored value',
  '7273': 'dating',
  '7995': 'gambling',
};

const CHANNEL: Readonly<Record<string, string>> = { web: 'Web', app: 'App', pos: 'Point of sale' };

/** A country by name and code (`France (FR)`), or the code alone where the browser has no name for it. */
export function country(v: unknown): string {
  const code = String(v);
  try {
    const name = new Intl.DisplayNames(undefined, { type: 'region' }).of(code);
    return name === undefined || name === code ? code : `${name} (${code})`;
  } catch {
    return code;
  }
}

function address(v: unknown): string {
  if (typeof v !== 'object' || v === null) return String(v);
  const a = v as Record<string, unknown>;
  return [a['postalCode'], a['country'] === undefined ? undefined : country(a['country'])]
    .filter((x) => x !== undefined)
    .join(', ');
}

function sub(key: string): (v: unknown, p: Payment) => string {
  return (_v, p) => {
    const card = p['card'];
    return typeof card === 'object' && card !== null ? String((card as Record<string, unknown>)[key]) : '';
  };
}

/** The groups, in order: what was paid, who paid, from where, with what card, the rest. */
const GROUPS: readonly { readonly title: string; readonly fields: readonly Field[] }[] = [
  {
    title: 'What was paid',
    fields: [
      { key: 'transactionId', label: 'Transaction id', always: true },
      { key: 'amount', label: 'Amount', show: (_v, p) => money(p), always: true },
      { key: 'merchantId', label: 'Merchant', always: true },
      {
        key: 'merchantCategory',
        label: 'Merchant category',
        show: (v) => (MCC[String(v)] === undefined ? String(v) : `${String(v)} (${MCC[String(v)]})`),
        always: true,
      },
      { key: 'channel', label: 'Channel', show: (v) => CHANNEL[String(v)] ?? String(v), always: true },
      { key: 'timestamp', label: 'Paid at', show: (v) => `${when(String(v))} (sent as ${String(v)})`, always: true },
      { key: 'country', label: 'Card country', show: country, always: true },
    ],
  },
  {
    title: 'Customer',
    fields: [
      { key: 'userId', label: 'User id', always: true },
      { key: 'email', label: 'Email', always: true },
      { key: 'sessionId', label: 'Session id' },
    ],
  },
  {
    title: 'Device and network',
    fields: [
      { key: 'deviceId', label: 'Device id', always: true },
      { key: 'ipAddress', label: 'IP address', always: true },
      { key: 'ipCountry', label: 'IP address country', show: country, always: true },
      { key: 'userAgent', label: 'Browser (user agent)' },
    ],
  },
  {
    title: 'Card',
    fields: [
      { key: 'cardFingerprint', label: 'Card fingerprint', always: true },
      { key: 'card.bin', label: 'Card BIN (first digits)', show: sub('bin') },
      { key: 'card.last4', label: 'Card last 4 digits', show: sub('last4') },
      { key: 'billingAddress', label: 'Billing address', show: address },
      { key: 'shippingAddress', label: 'Shipping address', show: address },
    ],
  },
  {
    title: 'Other',
    fields: [
      { key: 'note', label: "Merchant's note" },
      {
        key: 'analysis',
        label: 'Second opinion asked',
        show: (v) => (v === 'deep' ? 'Yes (deep analysis)' : String(v)),
      },
    ],
  },
];

/** The keys the groups show (`currency` with the amount, `card` through its parts and `cardFingerprint`). */
const KNOWN = new Set([
  ...GROUPS.flatMap((g) => g.fields.map((f) => f.key.split('.')[0] ?? f.key)),
  'currency',
  'metadata',
]);

/** A field's value in `p` (`card.bin` reads inside `card`), or `undefined`. */
function valueOf(p: Payment, key: string): unknown {
  const [top = key, inner] = key.split('.');
  const v = p[top];
  if (inner === undefined) return v;
  return typeof v === 'object' && v !== null ? (v as Record<string, unknown>)[inner] : undefined;
}

function text(v: unknown): string {
  return typeof v === 'object' && v !== null ? JSON.stringify(v) : String(v);
}

function rows(p: Payment, fields: readonly Field[]): Child[][] {
  return fields.flatMap((f): Child[][] => {
    const v = valueOf(p, f.key);
    if (v === undefined || v === null || v === '')
      return f.always === true ? [[h('dt', {}, f.label), h('dd', { class: 'absent' }, 'not sent')]] : [];
    return [[h('dt', {}, f.label), h('dd', {}, f.show === undefined ? text(v) : f.show(v, p))]];
  });
}

/** The payment's fields, grouped, in a fixed order with labels. */
export function paymentFields(p: Payment): HTMLElement {
  const metadata = p['metadata'];
  const extra = Object.keys(p)
    .filter((k) => !KNOWN.has(k))
    .sort();
  const more: Child[][] = [
    ...(typeof metadata === 'object' && metadata !== null
      ? Object.entries(metadata as Record<string, unknown>).map(([k, v]) => [
          h('dt', {}, 'Merchant data: ', h('code', {}, k)),
          h('dd', {}, text(v)),
        ])
      : []),
    ...extra.map((k) => [h('dt', {}, h('code', {}, k)), h('dd', {}, text(p[k]))]),
  ];
  return h(
    'div',
    { id: 'payment-fields' },
    GROUPS.map((g, i) => {
      const shown = [...rows(p, g.fields), ...(g.title === 'Other' ? more : [])];
      if (shown.length === 0) return null;
      return h(
        'section',
        { 'aria-labelledby': `pay-g${i}` },
        h('h3', { id: `pay-g${i}` }, g.title),
        h('dl', { class: 'fields' }, shown),
      );
    }),
  );
}
