/**
 * The signals a case keeps (docs/cases.md "Signals"): the signals version that served the payment and, for every
 * signal, its value and its definition in plain words, with which of them mattered (read by a rule that fired, or
 * named in the model's top reasons). Built once per case from the scorer's `decided` event (a template per signals
 * version, compiled once), bounded in size so the intake message stays small; shown by the case API as the
 * signals that mattered first, and the recent activity of the payment's user, card, device, IP address and email
 * (the aggregates keyed by exactly that field).
 * @module
 */
import { z } from 'zod';
import type { PaymentEvent } from '../domain/payment-event';
import type { DecidedPayment } from '../scoring/scorer';
import type { CompiledSignals } from '../signals/compiled-signals';
import { fieldReader } from '../signals/event-fields';
import type { KeyField } from '../signals/signals-document';

/** One signal of a case: its value when the payment was decided and what it means. */
export interface CaseSignal {
  readonly name: string;
  /** `null` when the value was not a finite number. */
  readonly value: number | null;
  readonly definition: string;
  readonly kind: 'aggregate' | 'feature';
  /** Aggregates: the key fields (one, or a composite), the operation and the window. */
  readonly key?: readonly string[];
  readonly op?: string;
  readonly window?: string;
}

/** Why a signal mattered: the rules that fired and read it, and whether the model named it in its top reasons. */
export interface MatteredRef {
  readonly name: string;
  readonly rules: readonly string[];
  readonly model: boolean;
}

/** What a case keeps (the `signals` column): absent on cases opened before signals were recorded. */
export interface CaseSignals {
  readonly version: { readonly name: string; readonly version: string };
  /** Kept signals, in the version's row order. */
  readonly signals: readonly CaseSignal[];
  /** The signals that mattered, rules' first (in rule order), then the model's reasons (in their order). */
  readonly mattered: readonly MatteredRef[];
  /** Signals left out to keep the case within {@link MAX_SIGNALS_CHARS} (the ones that mattered never are). */
  readonly omitted: number;
}

/** Longest definition kept, characters (a `where` or a description can be long). */
export const MAX_DEFINITION_CHARS = 300;
/** Budget of a case's signals as JSON, characters: a version has at most 320 signals; the message stays small. */
export const MAX_SIGNALS_CHARS = 48 * 1024;

const signalSchema = z.strictObject({
  name: z.string().min(1).max(64),
  value: z.number().nullable(),
  definition: z.string().max(MAX_DEFINITION_CHARS),
  kind: z.enum(['aggregate', 'feature']),
  key: z.array(z.string().max(64)).max(3).optional(),
  op: z.string().max(16).optional(),
  window: z.string().max(16).optional(),
});

/** The schema of {@link CaseSignals} (the intake checks a message's `signals` with it). */
export const caseSignalsSchema = z.strictObject({
  version: z.strictObject({ name: z.string().min(1).max(64), version: z.string().min(1).max(32) }),
  signals: z.array(signalSchema).max(320),
  mattered: z
    .array(
      z.strictObject({
        name: z.string().min(1).max(64),
        rules: z.array(z.string().max(128)).max(64),
        model: z.boolean(),
      }),
    )
    .max(320),
  omitted: z.number().int().min(0),
});

/** A ruleset as the case writer reads it: its rules' `when` texts. */
export interface RulesetText {
  readonly name: string;
  readonly version: string;
  readonly document: { readonly rules: readonly { readonly id: string; readonly when: string }[] };
}

/** The rulesets an instance holds (the decisioning's active one and its candidate), to find the one that decided. */
export interface CaseRulesets {
  readonly ruleset: RulesetText | undefined;
  readonly candidate?: RulesetText | undefined;
}

/** `signals.<name>` and `features.<name>` (the model's features are signals too) in a CEL text. */
const SIGNAL_REF = /(?<![\w.])(?:signals|features)\.([a-z][a-z0-9_]{0,63})\b/g;

/** The signal names a rule's `when` reads, in order of first use. */
export function signalsRead(when: string): string[] {
  const out: string[] = [];
  for (const m of when.matchAll(SIGNAL_REF)) if (m[1] !== undefined && !out.includes(m[1])) out.push(m[1]);
  return out;
}

const readsByRule = new WeakMap<RulesetText['document'], ReadonlyMap<string, readonly string[]>>();

/** Per rule id, the signals its `when` reads (computed once per ruleset document). */
function ruleReads(rs: RulesetText): ReadonlyMap<string, readonly string[]> {
  let m = readsByRule.get(rs.document);
  if (m === undefined) {
    m = new Map(rs.document.rules.map((r) => [r.id, signalsRead(r.when)] as const));
    readsByRule.set(rs.document, m);
  }
  return m;
}

/** The ruleset `ref` names among those `held` holds, if any. */
export function rulesetOf(
  held: CaseRulesets | undefined,
  ref: { readonly name: string; readonly version: string } | undefined,
): RulesetText | undefined {
  if (held === undefined || ref === undefined) return undefined;
  for (const rs of [held.ruleset, held.candidate])
    if (rs !== undefined && rs.name === ref.name && rs.version === ref.version) return rs;
  return undefined;
}

/** One signal of a version without its value, and its JSON size (built once per version). */
interface Slot {
  readonly entry: Omit<CaseSignal, 'value'>;
  readonly chars: number;
}

const templates = new WeakMap<CompiledSignals, readonly Slot[]>();

function clip(s: string): string {
  return s.length <= MAX_DEFINITION_CHARS ? s : `${s.slice(0, MAX_DEFINITION_CHARS - 1)}…`;
}

/** The version's signals as a case keeps them, without values (once per version). */
function templateOf(v: CompiledSignals): readonly Slot[] {
  let t = templates.get(v);
  if (t !== undefined) return t;
  const aggs = v.document.aggregates;
  t = v.names.map((name, i): Slot => {
    const a = i < aggs.length ? aggs[i] : undefined;
    const entry: Omit<CaseSignal, 'value'> =
      a === undefined
        ? { name, definition: clip(v.definition(name) ?? ''), kind: 'feature' }
        : {
            name,
            definition: clip(v.definition(name) ?? ''),
            kind: 'aggregate',
            key: typeof a.key === 'string' ? [a.key] : [...a.key],
            op: a.op,
            window: a.window,
          };
    // + the value (at most 24 characters) and a separator
    return { entry, chars: JSON.stringify(entry).length + 34 };
  });
  templates.set(v, t);
  return t;
}

/** The signals that mattered for `d`: read by a rule that fired (when its text is at hand), then the model's reasons. */
function matteredOf(d: DecidedPayment, v: CompiledSignals, rs: RulesetText | undefined): MatteredRef[] {
  const byName = new Map<string, { rules: string[]; model: boolean }>();
  const reads = rs === undefined ? undefined : ruleReads(rs);
  for (const r of d.result.rules ?? [])
    for (const name of reads?.get(r.id) ?? []) {
      if (v.indexOf(name) === undefined) continue;
      const m = byName.get(name) ?? { rules: [], model: false };
      if (!m.rules.includes(r.id)) m.rules.push(r.id);
      byName.set(name, m);
    }
  for (const reason of d.result.reasons) {
    if (v.indexOf(reason.code) === undefined) continue;
    const m = byName.get(reason.code) ?? { rules: [], model: false };
    m.model = true;
    byName.set(reason.code, m);
  }
  return [...byName].map(([name, m]) => ({ name, rules: m.rules, model: m.model }));
}

/**
 * What a case keeps of `d`'s signals, or `undefined` when the event carries none. `rulesets`: the rulesets the
 * instance holds; the one that decided gives its fired rules' texts (without it, only the model's reasons matter).
 */
export function caseSignalsOf(d: DecidedPayment, rulesets?: CaseRulesets): CaseSignals | undefined {
  const s = d.signals;
  if (s === undefined) return undefined;
  const v = s.version;
  const slots = templateOf(v);
  const mattered = matteredOf(d, v, rulesetOf(rulesets, d.result.ruleset));
  const keep = new Array<boolean>(slots.length).fill(false);
  let chars = 0;
  // the ones that mattered first (always kept), then aggregates, then the other features, within the budget
  for (const m of mattered) {
    const i = v.indexOf(m.name) ?? -1;
    if (i < 0 || keep[i] === true) continue;
    keep[i] = true;
    chars += (slots[i] as Slot).chars;
  }
  for (const kind of ['aggregate', 'feature'] as const)
    slots.forEach((slot, i) => {
      if (keep[i] === true || slot.entry.kind !== kind || chars + slot.chars > MAX_SIGNALS_CHARS) return;
      keep[i] = true;
      chars += slot.chars;
    });
  const signals: CaseSignal[] = [];
  slots.forEach((slot, i) => {
    if (keep[i] !== true) return;
    const x = s.row[i];
    signals.push({ ...slot.entry, value: x !== undefined && Number.isFinite(x) ? x : null });
  });
  return { version: { name: v.name, version: v.version }, signals, mattered, omitted: slots.length - signals.length };
}

/** A signal that mattered, as the case API shows it. */
export type MatteredSignal = CaseSignal & Omit<MatteredRef, 'name'>;

/** The payment fields whose recent activity a case shows, and how the console names them. */
export const ACTIVITY_FIELDS = [
  { field: 'userId', label: 'user' },
  { field: 'cardFingerprint', label: 'card' },
  { field: 'deviceId', label: 'device' },
  { field: 'ipAddress', label: 'IP address' },
  { field: 'email', label: 'email' },
] as const satisfies readonly { field: KeyField; label: string }[];

/** The recent activity of one of the payment's fields: the aggregates keyed by exactly that field. */
export interface ActivityGroup {
  readonly field: (typeof ACTIVITY_FIELDS)[number]['field'];
  readonly label: string;
  /** Whether the payment had this field (without it, its aggregates read 0 and counted nothing). */
  readonly present: boolean;
  readonly aggregates: readonly CaseSignal[];
}

/** The case API's view of a case's signals: the version, the ones that mattered (first), and all of them. */
export interface SignalsView {
  readonly version: { readonly name: string; readonly version: string };
  readonly mattered: readonly MatteredSignal[];
  readonly all: readonly CaseSignal[];
  readonly omitted: number;
}

const readers = new Map(ACTIVITY_FIELDS.map((f) => [f.field, fieldReader(f.field)] as const));

/** The view of a case's kept signals. */
export function signalsView(s: CaseSignals): SignalsView {
  const byName = new Map(s.signals.map((x) => [x.name, x] as const));
  const mattered = s.mattered.flatMap((m): MatteredSignal[] => {
    const x = byName.get(m.name);
    return x === undefined ? [] : [{ ...x, rules: m.rules, model: m.model }];
  });
  return { version: s.version, mattered, all: s.signals, omitted: s.omitted };
}

/** The recent activity of the payment's user, card, device, IP address and email (counts, never other values). */
export function activityOf(s: CaseSignals, payment: PaymentEvent): ActivityGroup[] {
  return ACTIVITY_FIELDS.map(({ field, label }) => ({
    field,
    label,
    present: readers.get(field)?.(payment) !== undefined,
    aggregates: s.signals.filter((x) => x.kind === 'aggregate' && x.key?.length === 1 && x.key[0] === field),
  }));
}
