/** The API's shapes, as far as the console reads them (docs/cases.md, docs/console.md). */

export interface Reason {
  readonly code: string;
  readonly contribution: number;
  readonly description: string;
}

export interface Case {
  readonly id: string;
  readonly transactionId: string;
  readonly payment: Readonly<Record<string, unknown>>;
  readonly score: number | null;
  readonly decision: string;
  readonly reasons: readonly Reason[];
  readonly rules: readonly { readonly id: string; readonly action: string }[];
  readonly ruleErrors: readonly string[];
  readonly model: { readonly name: string; readonly version: string };
  readonly ruleset?: { readonly name: string; readonly version: string };
  readonly profile?: { readonly id: string };
  readonly escalation?: Readonly<Record<string, unknown>>;
  readonly decidedAt: string;
  readonly openedAt: string;
  readonly state: 'open' | 'assigned' | 'closed';
  readonly assignee?: string;
  readonly verdict?: 'fraud' | 'legit';
  readonly verdictReason?: string;
  readonly closedAt?: string;
  readonly closedBy?: string;
  /** The queue it was routed to, and when that queue's SLA runs out. */
  readonly queue?: string;
  readonly slaDueAt?: string;
  /** Seconds since the decision (to the close, once closed), and whether the SLA ran out first (list answers). */
  readonly ageSeconds?: number;
  readonly slaBreached?: boolean;
}

export interface CaseEvent {
  readonly at: string;
  readonly actor: string;
  readonly action: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** One signal of a case: its value when the payment was decided and its definition in plain words. */
export interface CaseSignal {
  readonly name: string;
  readonly value: number | null;
  readonly definition: string;
  readonly kind: 'aggregate' | 'feature';
  readonly key?: readonly string[];
  readonly op?: string;
  readonly window?: string;
}

/** A signal that mattered: the rules that fired and read it, and whether the model named it in its top reasons. */
export interface MatteredSignal extends CaseSignal {
  readonly rules: readonly string[];
  readonly model: boolean;
}

export interface SignalsView {
  readonly version: { readonly name: string; readonly version: string };
  readonly mattered: readonly MatteredSignal[];
  readonly all: readonly CaseSignal[];
  /** Signals the case left out to stay small (never one that mattered). */
  readonly omitted: number;
}

/** The recent activity of one of the payment's fields: the aggregates keyed by exactly that field. */
export interface ActivityGroup {
  readonly field: string;
  readonly label: string;
  readonly present: boolean;
  readonly aggregates: readonly CaseSignal[];
}

export interface CaseDetail {
  readonly case: Case;
  readonly events: readonly CaseEvent[];
  readonly userCases: readonly Case[];
  /** Absent for a case whose payment was scored before signals were recorded. */
  readonly signals?: SignalsView;
  readonly activity?: readonly ActivityGroup[];
}

export interface Me {
  readonly name: string;
  readonly roles: readonly string[];
  readonly development: boolean;
  readonly mode: string;
}
