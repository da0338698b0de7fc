/**
 * One line of the decision log: what was decided, with what, from which inputs. Id fields and personal data
 * (email, IP address, user agent, card fingerprint, postal codes) are keyed hashes; the free-text `note`,
 * `metadata` and `card.last4` are never recorded (docs/learning-loop.md "What is logged").
 */
import type { Velocity } from '../domain/user-context';
import type { DecidedPayment } from '../scoring/scorer';
import type { KeyedHash } from '../platform/keyed-hash';

/**
 * Event fields that identify a person or a device: logged only as keyed hashes ({@link KeyedHash}). A field of
 * a nested object is named by its path (`card.fingerprint`); the object itself is logged as an object.
 */
export const HASHED_FIELDS = [
  'userId',
  'deviceId',
  'cardFingerprint',
  'sessionId',
  'email',
  'ipAddress',
  'userAgent',
  'card.fingerprint',
  'billingAddress.postalCode',
  'shippingAddress.postalCode',
] as const;

/**
 * Event fields never logged in any form: free text, the merchant's metadata, and the card's last 4 digits
 * (with the BIN, which is kept, they narrow the card number to a few thousand).
 */
export const OMITTED_FIELDS = ['note', 'metadata', 'card.last4'] as const;

/** A logged event value: a string or number, or one level of nested object (`card`, the addresses). */
export type LoggedValue = string | number | Readonly<Record<string, string | number>>;

/** The format version of a {@link DecisionRecord} (`v`). */
export const DECISION_RECORD_VERSION = 1;

/** A fired rule, as the decision reported it. */
export interface FiredRule {
  readonly id: string;
  readonly action: string;
}

/** One decision, as logged (one JSON line). */
export interface DecisionRecord {
  readonly v: typeof DECISION_RECORD_VERSION;
  readonly transactionId: string;
  /** When the decision was made (wall clock, ISO 8601 UTC). */
  readonly decidedAt: string;
  readonly model: { readonly name: string; readonly version: string };
  /** The ruleset that decided, when rules are configured. */
  readonly ruleset?: { readonly name: string; readonly version: string };
  /** The merchant risk profile used, when rules are configured. */
  readonly profile?: { readonly id: string };
  /** Model input features by name (the manifest's order and names). */
  readonly features: Readonly<Record<string, number>>;
  /** The velocity counters the features were computed from. */
  readonly velocity: Velocity;
  readonly score: number | null;
  readonly decision: string;
  /** The rules that fired (empty without rules). */
  readonly rules: readonly FiredRule[];
  /** Who produced the decision: `local`, `openai` or `local-fallback`. */
  readonly source: string;
  /** The escalation's outcome, when the payment was escalated (never the LLM's text). */
  readonly escalation?: {
    readonly outcome: string;
    readonly triggers: readonly string[];
    readonly localDecision: string;
    readonly llmDecision?: string;
  };
  /** The event fields rules can see: {@link HASHED_FIELDS} as keyed hashes, {@link OMITTED_FIELDS} left out. */
  readonly event: Readonly<Record<string, LoggedValue>>;
  /** Which `event` fields (paths: `card.fingerprint`) hold keyed hashes instead of the raw value. */
  readonly hashed: readonly string[];
  /**
   * The list memberships the decision used: for each list the deciding ruleset consulted, whether the
   * payment's key value was on it (`{}` without a ruleset or lists). Absent in records written before it was
   * logged: a backtest then replays lists with today's entries and says so.
   */
  readonly lists?: Readonly<Record<string, boolean>>;
  /**
   * The signal values the decision used, by name: every aggregate and derived feature of the serving signals
   * version that is not a model input (those are in `features`), point in time; what `npm run model:train` and the
   * backtest read, with `features`. Absent when every signal is a model input (the shipped version), and in records
   * written before signals were logged.
   */
  readonly signals?: Readonly<Record<string, number>>;
  /** The signals version those values come from. */
  readonly signalsVersion?: { readonly name: string; readonly version: string };
}

/** Fields a decision result may carry beside the model's (filled when rules decided the payment). */
interface RuleFields {
  readonly rules?: readonly FiredRule[];
  readonly ruleset?: { readonly name: string; readonly version: string };
  readonly profile?: { readonly id: string };
}

const HASHED: ReadonlySet<string> = new Set(HASHED_FIELDS);
const OMITTED: ReadonlySet<string> = new Set(OMITTED_FIELDS);

/**
 * The logged form of `fields` (the event, or one of its objects at `prefix`): strings and numbers as they are,
 * hashed and omitted paths applied, objects one level deep (an empty one left out). Pushes hashed paths.
 */
function loggedFields(
  fields: object,
  prefix: string,
  hash: KeyedHash,
  hashed: string[],
): Record<string, string | number> | Record<string, LoggedValue> {
  const out: Record<string, LoggedValue> = {};
  for (const [k, v] of Object.entries(fields) as [string, unknown][]) {
    const path = prefix === '' ? k : `${prefix}.${k}`;
    if (v === undefined || OMITTED.has(path)) continue;
    if (HASHED.has(path)) {
      out[k] = hash.of(String(v));
      hashed.push(path);
    } else if (typeof v === 'string' || typeof v === 'number') out[k] = v;
    else if (prefix === '' && typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const inner = loggedFields(v, path, hash, hashed) as Record<string, string | number>;
      if (Object.keys(inner).length > 0) out[k] = inner;
    }
  }
  return out;
}

/** Builds the record of one decided payment (copies everything it keeps: the row may be reused). */
export function toDecisionRecord(d: DecidedPayment, hash: KeyedHash, decidedAtMs: number): DecisionRecord {
  const hashed: string[] = [];
  const event = loggedFields(d.event, '', hash, hashed);
  const features: Record<string, number> = {};
  d.manifest.features.forEach((f, i) => (features[f.name] = d.row[i] ?? Number.NaN));
  const r = d.result;
  const extra = r as typeof r & RuleFields;
  const esc = r.escalation;
  return {
    v: DECISION_RECORD_VERSION,
    transactionId: r.transactionId,
    decidedAt: new Date(decidedAtMs).toISOString(),
    model: { name: r.model.name, version: r.model.version },
    ...(extra.ruleset === undefined ? {} : { ruleset: { name: extra.ruleset.name, version: extra.ruleset.version } }),
    ...(extra.profile === undefined ? {} : { profile: { id: extra.profile.id } }),
    features,
    velocity: { ...d.velocity },
    score: r.score,
    decision: r.decision,
    rules: (extra.rules ?? []).map((x) => ({ id: x.id, action: x.action })),
    source: r.source,
    ...(esc === undefined
      ? {}
      : {
          escalation: {
            outcome: esc.outcome,
            triggers: [...esc.triggers],
            localDecision: esc.localDecision,
            ...(esc.llm === undefined ? {} : { llmDecision: esc.llm.decision }),
          },
        }),
    event,
    hashed,
    lists: { ...d.lists },
    ...signalsOf(d),
  };
}

/**
 * The record's `signals` and `signalsVersion` (nothing without signals): the signals that are not already in
 * `features` (a model input's value is its signal's, as float32), so the shipped version adds no values.
 */
function signalsOf(d: DecidedPayment): Pick<DecisionRecord, 'signals' | 'signalsVersion'> {
  const s = d.signals;
  if (s === undefined) return {};
  const version = { name: s.version.name, version: s.version.version };
  const inputs = inputNames(d.manifest);
  let values: Record<string, number> | undefined;
  const names = s.version.names;
  for (let i = 0; i < names.length; i++) {
    const name = names[i] as string;
    if (inputs.has(name)) continue;
    (values ??= {})[name] = s.row[i] ?? Number.NaN;
  }
  return values === undefined ? { signalsVersion: version } : { signals: values, signalsVersion: version };
}

const inputSets = new WeakMap<DecidedPayment['manifest'], ReadonlySet<string>>();
/** The model's input feature names (kept per manifest). */
function inputNames(manifest: DecidedPayment['manifest']): ReadonlySet<string> {
  let s = inputSets.get(manifest);
  if (s === undefined) inputSets.set(manifest, (s = new Set(manifest.features.map((f) => f.name))));
  return s;
}
