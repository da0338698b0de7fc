/**
 * The types of the case API (lib/cases/case-service.ts): its dependencies, what it answers, and the changes a verdict
 * or a reassignment reports (the audit trail's rows, lib/governance).
 */
import type { Identity } from '../identity/identity';
import type { RecentDecision } from '../learning/recent-decisions-store';
import type { Actor } from '../identity/principal';
import type { OutboxLabel } from './case-outbox';
import type { CaseListOption, CaseLists } from './case-lists';
import type { Case, CaseEvent, CaseState, CaseStore, CloseTransaction } from './case-store';
import type { ActivityGroup, SignalsView } from './case-signals';
import type { CaseView } from './case-sla';

/** Request headers and query, as the Functions `HttpRequest` has them. */
export interface Lookup {
  get(name: string): string | null;
}

/** Dependencies of a {@link CaseService}. */
export interface CaseServiceDeps {
  readonly store: CaseStore;
  readonly identity: Identity;
  /** The lists path (a verdict's `addToList` is checked against it); absent without a ruleset (then 404). */
  readonly lists?: CaseLists;
  /** Wall clock, ms. */
  readonly wallClock: () => number;
  /** Cases per page of the list. Default 50. */
  readonly pageSize?: number;
  /** The user's other cases shown with a case. Default 20. */
  readonly historyLimit?: number;
  /** The user's recent decisions (lib/learning/recent-decisions.ts); absent: the answer has no `recentPayments`. */
  readonly recent?: RecentPayments;
  /** Called right after a verdict commits (wakes the outbox relay). */
  readonly committed?: () => void;
  /** Reports each verdict (telemetry counts them by verdict; never any payment data). */
  readonly on?: { verdict?(e: { readonly verdict: 'fraud' | 'legit' }): void };
}

/** The user's recent decisions, as the case answer reads them. */
export interface RecentPayments {
  /** Newest first; `undefined` when they cannot be read now (bounded in time, never throws). */
  forUser(userId: string): Promise<readonly RecentDecision[] | undefined>;
  /** How long a user's entries are kept after their last decision, ms. */
  readonly ttlMs: number;
}

/** A verdict given, as {@link CaseService.verdictChange} reports it. */
export interface VerdictChange {
  readonly case: Case;
  /** The transaction's label the verdict makes (delivered to the labels store after the commit). */
  readonly label: OutboxLabel;
  /** Who gave it. */
  readonly actor: string;
  /** The case before the verdict. */
  readonly prior: { readonly state: CaseState; readonly assignee?: string };
  readonly verdict: 'fraud' | 'legit';
  readonly reason?: string;
  /** The list the verdict added the case's value to (`addToList`), by name only. */
  readonly list?: string;
  /** The case was already closed with this verdict and reason: nothing was written. */
  readonly repeated: boolean;
}

/**
 * A step run in the verdict's transaction after the case's update, with the change (the audit trail's row,
 * lib/governance); a throw rolls the verdict back.
 */
export type VerdictStep = (tx: Pick<CloseTransaction, 'query'>, change: VerdictChange) => Promise<void>;

/** A reassignment, as {@link CaseService.assignChange} reports it. */
export interface AssignChange {
  readonly case: Case;
  /** The lead who reassigned. */
  readonly actor: string;
  /** The case before. */
  readonly prior: { readonly state: CaseState; readonly assignee?: string };
}

/**
 * What `GET /api/cases/{id}` answers (`signals` and `activity`: absent for a case that kept no signals; `lists`: for
 * a lead on a case not closed, the lists the active ruleset declares, which a verdict's `addToList` may name;
 * `recentPayments`: the user's recent decisions, newest first, the case's own payment included, absent when they
 * could not be read; `recentPaymentsKeptDays`: how long they are kept).
 */
export interface CaseDetail {
  readonly case: CaseView;
  readonly events: readonly CaseEvent[];
  readonly userCases: readonly Case[];
  readonly signals?: SignalsView;
  readonly activity?: readonly ActivityGroup[];
  readonly lists?: readonly CaseListOption[];
  readonly recentPayments?: readonly RecentDecision[];
  readonly recentPaymentsKeptDays?: number;
}

/** What `GET /api/me` answers. */
export interface Me extends Actor {
  readonly mode: string;
}
