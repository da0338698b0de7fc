/**
 * The signals document (docs/signals.md): the third artifact kind beside models and rulesets, uploaded as
 * `features/{name}/{version}.json`. It declares the aggregates counted per key over time windows and the derived
 * features computed from the event, the user's context and those aggregates. Rules read every signal as
 * `signals.<name>`; a model manifest names its input features among them. Parsed here (zod), compiled once per
 * version (`compile-signals.ts`), never interpreted per request.
 * @module
 */
import { z } from 'zod';

/** Signals document names: as model names. */
export const SIGNALS_NAME_RE = /^[a-z][a-z0-9-]{0,63}$/;
/** Semantic version `MAJOR.MINOR.PATCH`, as models. */
export const SIGNALS_VERSION_RE = /^(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})\.(0|[1-9]\d{0,5})$/;
/** A signal (aggregate or feature) name: what `signals.<name>` and a manifest's feature list use. */
export const SIGNAL_NAME_RE = /^[a-z][a-z0-9_]{0,63}$/;
/** Largest accepted document, bytes. */
export const MAX_SIGNALS_BYTES = 256 * 1024;
/** Most aggregates in one document. */
export const MAX_AGGREGATES = 64;
/** Most derived features in one document. */
export const MAX_FEATURES = 256;
/** Default and largest `cap` of a distinct count (Stripe Radar caps its distinct counts at 25). */
export const DEFAULT_DISTINCT_CAP = 25;
export const MAX_DISTINCT_CAP = 1000;

/**
 * The event fields an aggregate may be keyed by, or count distinct values of: the string fields of a payment
 * (lib/domain/payment-event.ts), nested ones by a dotted path. A payment without the field (an optional one not
 * sent) is not counted for that key and reads 0.
 */
export const KEY_FIELDS = [
  'userId',
  'merchantId',
  'deviceId',
  'sessionId',
  'cardFingerprint',
  'email',
  'ipAddress',
  'userAgent',
  'country',
  'ipCountry',
  'currency',
  'merchantCategory',
  'channel',
  'card.bin',
  'billingAddress.country',
  'billingAddress.postalCode',
  'shippingAddress.country',
  'shippingAddress.postalCode',
] as const;
export type KeyField = (typeof KEY_FIELDS)[number];

/** Numeric fields `sum`, `avg` and `max` may read. */
export const VALUE_FIELDS = ['amount'] as const;
export type ValueField = (typeof VALUE_FIELDS)[number];

export const AGGREGATE_OPS = ['count', 'sum', 'distinct', 'avg', 'max'] as const;
export type AggregateOp = (typeof AGGREGATE_OPS)[number];

/** A window: a whole number of minutes, hours or days, from 1 minute to 90 days (`15m`, `1h`, `24h`, `30d`). */
export const WINDOW_RE = /^([1-9]\d{0,3})(m|h|d)$/;
const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;
export const MIN_WINDOW_MS = 60_000;
export const MAX_WINDOW_MS = 90 * 86_400_000;

/** The length of a window, ms, or `undefined` when it is not one ({@link WINDOW_RE}, 1 min to 90 days). */
export function windowMs(window: string): number | undefined {
  const m = WINDOW_RE.exec(window);
  if (m === null) return undefined;
  const ms = Number(m[1]) * UNIT_MS[m[2] as keyof typeof UNIT_MS];
  return ms >= MIN_WINDOW_MS && ms <= MAX_WINDOW_MS ? ms : undefined;
}

const signalName = z.string().regex(SIGNAL_NAME_RE, { error: 'must be lower-case letters, digits and _, 1-64' });
const description = z.string().max(500).optional();

/** One aggregate: `op` over the payments of the same `key` within `window` (see docs/signals.md). */
export const aggregateSchema = z
  .strictObject({
    name: signalName,
    description,
    /** One event field, or a composite of 2 or 3 (e.g. `["cardFingerprint", "merchantId"]`). */
    key: z.union([z.enum(KEY_FIELDS), z.array(z.enum(KEY_FIELDS)).min(1).max(3)]),
    op: z.enum(AGGREGATE_OPS),
    /** `sum`, `avg`, `max`: a value field; `distinct`: a key field whose distinct values are counted. */
    of: z.union([z.enum(VALUE_FIELDS), z.enum(KEY_FIELDS)]).optional(),
    window: z.string().refine((w) => windowMs(w) !== undefined, { error: 'must be 1m to 90d, as 15m, 1h, 24h, 30d' }),
    /** A CEL bool over `event`: only payments for which it holds are counted. */
    where: z.string().min(1).max(2000).optional(),
    /** `distinct` only: the count stops at this value (default 25, at most 1000). */
    cap: z.number().int().min(1).max(MAX_DISTINCT_CAP).optional(),
  })
  .superRefine((a, ctx) => {
    const numeric = (VALUE_FIELDS as readonly string[]).includes(a.of ?? '');
    if (a.op === 'count' && a.of !== undefined)
      ctx.addIssue({ code: 'custom', path: ['of'], message: 'count takes no "of"' });
    if ((a.op === 'sum' || a.op === 'avg' || a.op === 'max') && !numeric)
      ctx.addIssue({ code: 'custom', path: ['of'], message: `${a.op} needs "of": one of ${VALUE_FIELDS.join(', ')}` });
    if (a.op === 'distinct' && (a.of === undefined || numeric))
      ctx.addIssue({ code: 'custom', path: ['of'], message: 'distinct needs "of": a key field' });
    if (a.op !== 'distinct' && a.cap !== undefined)
      ctx.addIssue({ code: 'custom', path: ['cap'], message: 'only a distinct count takes a cap' });
  });
export type AggregateDocument = z.infer<typeof aggregateSchema>;

/**
 * A reference a transform reads: `signals.<aggregate or earlier feature>`, `event.amount`, or
 * `velocity.<count1m|count1h|count24h|sum24h|distinctCountries24h>` (the user's exact velocity).
 */
export const REF_RE =
  /^(signals\.[a-z][a-z0-9_]{0,63}|event\.amount|velocity\.(count1m|count1h|count24h|sum24h|distinctCountries24h))$/;
const ref = z.string().regex(REF_RE, { error: 'must be signals.<name>, event.amount or velocity.<figure>' });

/**
 * One derived feature. Exactly one of: `builtin` (one of the shipped model's 17 computations, by name), `log1p`
 * (ln(1 + ref)), `ratio` ([a, b]: a / b, 0 when b is 0), `bucket` (+ `edges`: the index of the first edge above
 * the value), `oneHot` (+ `equals`: 1 when the event's key field equals it), `value` (the ref as is), or `expr`
 * (a CEL expression over `event`, `velocity`, `profile` and `signals`, to a number or a bool).
 */
export const featureSchema = z
  .strictObject({
    name: signalName,
    description,
    builtin: z.string().optional(),
    log1p: ref.optional(),
    ratio: z.tuple([ref, ref]).optional(),
    bucket: ref.optional(),
    edges: z.array(z.number().finite()).min(1).max(64).optional(),
    oneHot: z.enum(KEY_FIELDS).optional(),
    equals: z.string().max(256).optional(),
    value: ref.optional(),
    expr: z.string().min(1).max(2000).optional(),
  })
  .superRefine((f, ctx) => {
    const kinds = (['builtin', 'log1p', 'ratio', 'bucket', 'oneHot', 'value', 'expr'] as const).filter(
      (k) => f[k] !== undefined,
    );
    if (kinds.length !== 1)
      ctx.addIssue({
        code: 'custom',
        path: [],
        message: 'needs exactly one of builtin, log1p, ratio, bucket, oneHot, value, expr',
      });
    if ((f.bucket === undefined) !== (f.edges === undefined))
      ctx.addIssue({ code: 'custom', path: ['edges'], message: 'bucket and edges go together' });
    if (f.edges !== undefined && f.edges.some((e, i) => i > 0 && e <= (f.edges?.[i - 1] ?? 0)))
      ctx.addIssue({ code: 'custom', path: ['edges'], message: 'must be strictly increasing' });
    if ((f.oneHot === undefined) !== (f.equals === undefined))
      ctx.addIssue({ code: 'custom', path: ['equals'], message: 'oneHot and equals go together' });
  });
export type FeatureDocument = z.infer<typeof featureSchema>;

/** Schema of a signals document. Names are unique across aggregates and features. */
export const signalsSchema = z
  .strictObject({
    schemaVersion: z.literal(1),
    name: z.string().regex(SIGNALS_NAME_RE),
    version: z.string().regex(SIGNALS_VERSION_RE),
    description,
    aggregates: z.array(aggregateSchema).max(MAX_AGGREGATES).default([]),
    features: z.array(featureSchema).max(MAX_FEATURES).default([]),
  })
  .superRefine((d, ctx) => {
    const seen = new Set<string>();
    const check = (name: string, path: (string | number)[]): void => {
      if (seen.has(name)) ctx.addIssue({ code: 'custom', path, message: `${name} is declared twice` });
      seen.add(name);
    };
    d.aggregates.forEach((a, i) => check(a.name, ['aggregates', i, 'name']));
    d.features.forEach((f, i) => check(f.name, ['features', i, 'name']));
  });
export type SignalsDocument = z.infer<typeof signalsSchema>;
