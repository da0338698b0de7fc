/**
 * The case store: cases opened by `review` decisions, the analysts' queue over them, and their history
 * (`case_events`). One interface; {@link SqlCaseStore} implements it on PostgreSQL (a server through `pg`, or
 * PGlite), and one contract suite (test/cases/case-store-contract.test.ts) runs on both.
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { EscalationInfo } from '../scoring/escalation-info';
import type { Reason } from '../scoring/decision';
import type { OutboxMessage } from './case-outbox';
import type { CaseSignals } from './case-signals';
import type { SqlClient } from '../platform/sql/sql-client';

/** A case's state: `open` (in the queue), `assigned` (an analyst works it), `closed` (a verdict was given). */
export type CaseState = 'open' | 'assigned' | 'closed';
export const CASE_STATES: readonly CaseState[] = ['open', 'assigned', 'closed'];

/** An analyst's verdict; it becomes the transaction's label. */
export type Verdict = 'fraud' | 'legit';

/** What a case is opened with: the decided payment (raw fields: only the authenticated case API shows them). */
export interface NewCase {
  readonly transactionId: string;
  readonly payment: PaymentEvent;
  readonly score: number | null;
  readonly decision: string;
  readonly reasons: readonly Reason[];
  readonly rules: readonly { readonly id: string; readonly action: string }[];
  readonly ruleErrors: readonly string[];
  readonly model: { readonly name: string; readonly version: string };
  readonly ruleset?: { readonly name: string; readonly version: string };
  readonly profile?: { readonly id: string };
  readonly escalation?: EscalationInfo;
  /** When the payment was decided, ms since the epoch. */
  readonly decidedAt: number;
  /** The signals version that served the payment, its signals and which mattered (lib/cases/case-signals.ts). */
  readonly signals?: CaseSignals;
}

/** One entry of a case's history. */
export interface CaseEvent {
  readonly at: string;
  readonly actor: string;
  /** `opened`, `assigned`, `note`, `verdict`, `reassigned`. */
  readonly action: string;
  readonly detail?: Readonly<Record<string, unknown>>;
}

/** A stored case, as the API returns it. */
export interface Case extends Omit<NewCase, 'decidedAt' | 'signals'> {
  readonly id: string;
  readonly decidedAt: string;
  readonly openedAt: string;
  readonly state: CaseState;
  readonly assignee?: string;
  readonly assignedAt?: string;
  readonly verdict?: Verdict;
  readonly verdictReason?: string;
  readonly closedAt?: string;
  readonly closedBy?: string;
  /** The queue the case was routed to when it was opened (absent for cases opened before queues existed). */
  readonly queue?: string;
  /** When its queue's SLA runs out: the decision time plus the queue's `slaHours`. */
  readonly slaDueAt?: string;
}

/** A filter of the case list (every field optional; all given fields must hold). */
export interface CaseFilter {
  readonly status?: CaseState;
  /** A rule that fired. */
  readonly rule?: string;
  readonly merchantId?: string;
  /** Score at least this. */
  readonly minScore?: number;
  /** Decided before this instant, ms since the epoch. */
  readonly decidedBefore?: number;
  /** The queue it was routed to. */
  readonly queue?: string;
  /** Assigned to this actor (the case may be closed since). */
  readonly assignee?: string;
  /** The merchant's transaction id (the console's search). */
  readonly transactionId?: string;
  /** The payment's user id (the console's search). */
  readonly userId?: string;
}

/** What `next` may be narrowed by: the list's filters that make sense for an open, unassigned case. */
export type NextFilter = Pick<CaseFilter, 'queue' | 'rule' | 'merchantId' | 'minScore'>;

/** Figures of a group of cases closed in a range (see {@link CaseStore.analytics}). */
export interface CaseFigures {
  /** Cases closed with a verdict. */
  readonly closed: number;
  readonly fraud: number;
  readonly legit: number;
  /** legit ÷ closed: the share of reviewed cases that were legitimate (a review that held a good payment); null when none closed. */
  readonly falsePositiveRate: number | null;
  /** Seconds from opened to closed: median and 90th percentile (continuous); null when none closed. */
  readonly handlingSeconds: { readonly median: number; readonly p90: number } | null;
  /** Closed after their SLA deadline. */
  readonly slaBreached: number;
}

/** The case analytics of a range of closing times. */
export interface CaseAnalytics {
  readonly total: CaseFigures;
  /** Per queue (`queue` null: cases opened before queues existed), most closed first. */
  readonly byQueue: readonly (CaseFigures & { readonly queue: string | null })[];
  /** Per rule that fired (a case counts once for each of its rules), most closed first. */
  readonly byRule: readonly (CaseFigures & { readonly rule: string })[];
}

/** Where a page starts: after the case (decidedAt, id) in the list's order. */
export interface CasePosition {
  readonly decidedAt: string;
  readonly id: string;
}

/** One page of cases. */
export interface CasePage {
  readonly cases: readonly Case[];
  /** Where the next page starts; absent on the last page. */
  readonly next?: CasePosition;
}

/** Result of a conditional change: the case, or why not. */
export type CaseChange =
  { readonly ok: true; readonly case: Case } | { readonly ok: false; readonly why: 'not_found' | 'closed' };

/** Result of {@link CaseStore.assign}: the case with its state and assignee before, or why not. */
export type CaseAssign =
  | {
      readonly ok: true;
      readonly case: Case;
      readonly prior: { readonly state: CaseState; readonly assignee?: string };
    }
  | { readonly ok: false; readonly why: 'not_found' | 'closed' };

/**
 * Result of {@link CaseStore.close}: the case closed now (`repeated: false`, with the case as it was before), or
 * already closed with the same verdict and reason (`repeated: true`: nothing was written), or why not (`closed`: it
 * was closed with another verdict or reason).
 */
export type CaseClose =
  | { readonly ok: true; readonly repeated: false; readonly case: Case; readonly prior: Case }
  | { readonly ok: true; readonly repeated: true; readonly case: Case }
  | { readonly ok: false; readonly why: 'not_found' | 'closed' };

/** What a close's `step` may write in the close's transaction (committed with the case, or not at all). */
export interface CloseTransaction {
  /** Adds a message to the case outbox, delivered after the commit (lib/cases/outbox-relay.ts). */
  enqueue(message: OutboxMessage): Promise<void>;
  /** Runs a statement in the transaction (the verdict's audit row, lib/governance). */
  query: SqlClient['query'];
}

/** A close's step: runs after the case's update, before the commit; a throw rolls everything back. */
export type CloseStep = (t: CloseTransaction, closed: { readonly prior: Case; readonly case: Case }) => Promise<void>;

/** The case store. Times are given by the caller (ms since the epoch), so tests control them. */
export interface CaseStore {
  /** Opens one case per transaction: a transaction that already has a case is skipped. Returns how many opened. */
  open(cases: readonly NewCase[], at: number): Promise<number>;
  /**
   * One case with its history and the signals it keeps (absent for a case opened before signals were recorded), or
   * `undefined`.
   */
  get(
    id: string,
  ): Promise<
    { readonly case: Case; readonly events: readonly CaseEvent[]; readonly signals?: CaseSignals } | undefined
  >;
  /** A page of at most `limit` cases matching `filter`, oldest or newest decided first, after `after`. */
  list(filter: CaseFilter, order: 'oldest' | 'newest', limit: number, after?: CasePosition): Promise<CasePage>;
  /**
   * Assigns the oldest open unassigned case matching `filter` to `actor` and returns it; `undefined` when none is left. Concurrent
   * callers never get the same case (`FOR UPDATE SKIP LOCKED`).
   */
  next(actor: string, at: number, filter?: NextFilter): Promise<Case | undefined>;
  /** Adds a note by `actor`. */
  addNote(id: string, actor: string, text: string, at: number): Promise<CaseChange>;
  /**
   * Assigns a case that is not closed to `assignee` (a lead's reassignment), with its row locked, and returns its
   * state and assignee before.
   */
  assign(id: string, actor: string, assignee: string, at: number): Promise<CaseAssign>;
  /**
   * Closes a case that is not closed yet with `verdict`, in one transaction with the case's row locked: the update,
   * its `case_events` entry, then `step` (the outbox's label and list entry, the audit row) on the same transaction.
   * When anything throws, nothing is written, the case is left as it was and the error is thrown. A case already
   * closed with the same verdict and reason answers `repeated` and writes nothing; a concurrent close waits for the
   * lock, then finds the case closed.
   */
  close(
    id: string,
    actor: string,
    verdict: Verdict,
    reason: string | undefined,
    at: number,
    step?: CloseStep,
  ): Promise<CaseClose>;
  /** The user's other cases, newest first (at most `limit`). */
  userCases(userId: string, exceptId: string, limit: number): Promise<Case[]>;
  /** Deletes every case of `userId` (erasure); returns how many. */
  eraseUser(userId: string): Promise<number>;
  /** Deletes cases decided before `before` (retention); returns how many. */
  deleteDecidedBefore(before: number): Promise<number>;
  /** Open cases and the oldest open case's decision time (metrics). */
  openStats(): Promise<{ readonly open: number; readonly oldestDecidedAt?: string }>;
  /** Cases not closed whose SLA deadline is before `at`, per queue (the SLA gauge). */
  slaBreaches(at: number): Promise<readonly { readonly queue: string; readonly count: number }[]>;
  /** Figures of the cases closed in [`from`, `to`) (ms since the epoch), in total, per queue and per rule. */
  analytics(from: number, to: number): Promise<CaseAnalytics>;
  dispose(): Promise<void>;
}
