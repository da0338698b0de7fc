/**
 * One line of the decision log: what was decided, with what, from which inputs. Id fields are keyed hashes,
 * and the free-text `note` is never recorded (docs/learning-loop.md "What is logged").
 */
import type { Velocity } from '../domain/user-context';
import type { DecidedPayment } from '../scoring/scorer';
import type { KeyedHash } from './keyed-hash';

/** Event fields that identify a person or a device: logged only as keyed hashes ({@link KeyedHash}). */
export const HASHED_FIELDS = ['userId', 'deviceId', 'cardFingerprint', 'sessionId'] as const;

/** Event fields never logged in any form. */
export const OMITTED_FIELDS = ['note'] as const;

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
  /** The event fields rules can see: id fields as keyed hashes, `note` left out. */
  readonly event: Readonly<Record<string, string | number>>;
  /** Which `event` fields hold keyed hashes instead of the raw value. */
  readonly hashed: readonly string[];
  /**
   * The list memberships the decision used: for each list the deciding ruleset consulted, whether the
   * payment's key value was on it (`{}` without a ruleset or lists). Absent in records written before it was
   * logged: a backtest then replays lists with today's entries and says so.
   */
  readonly lists?: Readonly<Record<string, boolean>>;
  /** Reserved for the signal values the decision used (not logged yet). */
  readonly signals?: Readonly<Record<string, number>>;
}

/** Fields a decision result may carry beside the model's (filled when rules decided the payment). */
interface RuleFields {
  readonly rules?: readonly FiredRule[];
  readonly ruleset?: { readonly name: string; readonly version: string };
  readonly profile?: { readonly id: string };
}

const HASHED: ReadonlySet<string> = new Set(HASHED_FIELDS);
const OMITTED: ReadonlySet<string> = new Set(OMITTED_FIELDS);

/** Builds the record of one decided payment (copies everything it keeps: the row may be reused). */
export function toDecisionRecord(d: DecidedPayment, hash: KeyedHash, decidedAtMs: number): DecisionRecord {
  const event: Record<string, string | number> = {};
  const hashed: string[] = [];
  for (const [k, v] of Object.entries(d.event) as [string, unknown][]) {
    if (v === undefined || OMITTED.has(k)) continue;
    if (HASHED.has(k)) {
      event[k] = hash.of(String(v));
      hashed.push(k);
    } else if (typeof v === 'string' || typeof v === 'number') event[k] = v;
  }
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
  };
}
