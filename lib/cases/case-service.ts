/**
 * The case API's operations (`/api/cases`, `/api/me`): who is acting (lib/identity), the queue, a case with the
 * user's other cases, notes, verdicts and reassignment. A verdict closes the case and writes, in the same
 * transaction, the transaction's label and (for a lead) a list entry to the case outbox, which the relay delivers
 * to the labels path and the lists path after the commit (lib/cases/outbox-relay.ts). Every action records its actor
 * and time.
 */
import { AppError } from '../errors/errors';
import type { OutboxLabel } from './case-outbox';
import { listAddition, listOptions } from './case-lists';
import type { Case, CaseAnalytics, CaseChange } from './case-store';
import {
  CASE_LIST_PARAMS,
  CASE_SEARCH_PARAMS,
  encodeCaseCursor,
  parseAnalyticsQuery,
  parseAssignBody,
  parseCaseId,
  parseCaseListQuery,
  parseNextQuery,
  parseNoteBody,
  parseVerdictBody,
  searchParams,
  type QueryParams,
} from './case-requests';
import type {
  AssignChange,
  CaseDetail,
  CaseServiceDeps,
  Lookup,
  Me,
  RecentPayments,
  VerdictChange,
  VerdictStep,
} from './case-service-types';
import { activityOf, signalsView } from './case-signals';
import { withSla, type CaseView } from './case-sla';

export type { CaseListOption, CaseLists } from './case-lists';
export type {
  AssignChange,
  CaseDetail,
  CaseServiceDeps,
  Lookup,
  Me,
  RecentPayments,
  VerdictChange,
  VerdictStep,
} from './case-service-types';

const WORKERS = ['analyst', 'lead'] as const;

function changedError(why: 'not_found' | 'closed'): AppError {
  return why === 'not_found'
    ? new AppError('not_found', 'No such case.')
    : new AppError('conflict', 'The case is closed.');
}

function changed(c: CaseChange): Case {
  if (c.ok) return c.case;
  throw changedError(c.why);
}

/** The case API of one engine. */
export class CaseService {
  constructor(private readonly d: CaseServiceDeps) {}

  /** `GET /api/me`: the actor, and whether it is a development identity. */
  me(headers: Lookup): Me {
    return { ...this.d.identity.actorOf(headers), mode: this.d.identity.mode };
  }

  /**
   * `GET /api/cases`: one page (each case with its age and SLA state) and the next page's opaque `cursor`.
   * `assignee=me` lists the caller's cases; another actor's name needs the role lead.
   * @throws AppError `forbidden` for an analyst's `assignee` naming someone else.
   */
  async list(
    headers: Lookup,
    query: QueryParams,
    known: readonly string[] = CASE_LIST_PARAMS,
  ): Promise<{ cases: readonly CaseView[]; cursor?: string }> {
    const actor = this.d.identity.require(headers, WORKERS);
    const q = parseCaseListQuery(query, known);
    const assignee = q.filter.assignee === 'me' ? actor.name : q.filter.assignee;
    if (assignee !== undefined && assignee !== actor.name && !actor.roles.includes('lead'))
      throw new AppError('forbidden', "Listing another analyst's cases needs the role lead (assignee=me lists yours).");
    const filter = assignee === undefined ? q.filter : { ...q.filter, assignee };
    const page = await this.d.store.list(filter, q.order, this.d.pageSize ?? 50, q.after);
    const now = this.d.wallClock();
    const cases = page.cases.map((c) => withSla(c, now));
    return page.next === undefined ? { cases } : { cases, cursor: encodeCaseCursor(page.next, q.order) };
  }

  /**
   * `POST /api/cases/search` `{ transactionId?, userId?, …the list's parameters }`: the list, searched by ids that
   * never travel in a URL. @throws AppError `validation_failed` naming every bad field.
   */
  search(headers: Lookup, body: unknown): Promise<{ cases: readonly CaseView[]; cursor?: string }> {
    return this.list(headers, searchParams(body), CASE_SEARCH_PARAMS);
  }

  /**
   * `POST /api/cases/next?queue=&rule=&merchantId=&minScore=`: the oldest open unassigned case matching the filters,
   * now assigned to the caller; `undefined` when none matches.
   */
  async next(headers: Lookup, query?: QueryParams): Promise<CaseView | undefined> {
    const actor = this.d.identity.require(headers, WORKERS);
    const filter = query === undefined ? {} : parseNextQuery(query);
    const now = this.d.wallClock();
    const c = await this.d.store.next(actor.name, now, filter);
    return c === undefined ? undefined : withSla(c, now);
  }

  /**
   * `GET /api/cases/{id}`: the case (with its age and SLA state), its history, the same user's other recent cases,
   * and, when the case kept them, its signals (the ones that mattered first) and the recent activity of its user,
   * card, device, IP address and email (lib/cases/case-signals.ts); the user's recent decisions (approved, declined
   * or held; the case's own payment included), read within a bounded time and left out when they cannot be; for a
   * lead on a case not closed, the lists a verdict may add the case's value to.
   */
  async get(headers: Lookup, rawId: string | undefined): Promise<CaseDetail> {
    const actor = this.d.identity.require(headers, WORKERS);
    const id = parseCaseId(rawId);
    const found = await this.d.store.get(id);
    if (found === undefined) throw new AppError('not_found', 'No such case.');
    const userId = found.case.payment.userId;
    const [userCases, recent] = await Promise.all([
      this.d.store.userCases(userId, id, this.d.historyLimit ?? 20),
      recentOf(this.d.recent, userId),
    ]);
    const s = found.signals;
    return {
      case: withSla(found.case, this.d.wallClock()),
      events: found.events,
      userCases,
      ...(s === undefined ? {} : { signals: signalsView(s), activity: activityOf(s, found.case.payment) }),
      ...(actor.roles.includes('lead') && found.case.state !== 'closed' ? { lists: listOptions(this.d.lists) } : {}),
      ...recent,
    };
  }

  /**
   * `GET /api/cases/analytics?from=&to=`: handling time, verdict mix, false-positive rate and SLA breaches of the
   * cases closed in [from, to) (default the last 7 days), in total, per queue and per rule.
   */
  async analytics(headers: Lookup, query: QueryParams): Promise<CaseAnalytics & { from: string; to: string }> {
    this.d.identity.require(headers, WORKERS);
    const { from, to } = parseAnalyticsQuery(query, this.d.wallClock());
    const figures = await this.d.store.analytics(from, to);
    return { from: new Date(from).toISOString(), to: new Date(to).toISOString(), ...figures };
  }

  /** `POST /api/cases/{id}/notes` `{ text }`. @throws AppError `conflict` on a closed case. */
  async addNote(headers: Lookup, rawId: string | undefined, body: unknown): Promise<Case> {
    const actor = this.d.identity.require(headers, WORKERS);
    const id = parseCaseId(rawId);
    const { text } = parseNoteBody(body);
    return changed(await this.d.store.addNote(id, actor.name, text, this.d.wallClock()));
  }

  /** `POST /api/cases/{id}/assign` `{ assignee }` (leads only). */
  async assign(headers: Lookup, rawId: string | undefined, body: unknown): Promise<Case> {
    return (await this.assignChange(headers, rawId, body)).case;
  }

  /**
   * {@link assign}, with who reassigned and the case's state and assignee before (the audit trail's old value;
   * lib/governance). @throws AppError `forbidden` (not a lead), `not_found`, `conflict` on a closed case.
   */
  async assignChange(headers: Lookup, rawId: string | undefined, body: unknown): Promise<AssignChange> {
    const actor = this.d.identity.require(headers, ['lead']);
    const id = parseCaseId(rawId);
    const { assignee } = parseAssignBody(body);
    const r = await this.d.store.assign(id, actor.name, assignee, this.d.wallClock());
    if (!r.ok) throw changedError(r.why);
    return { case: r.case, actor: actor.name, prior: r.prior };
  }

  /**
   * `POST /api/cases/{id}/verdict` `{ verdict, reason?, addToList? }`: in one transaction with the case locked, closes
   * the case and writes the label and the list entry (leads only: the value is the case payment's field the list is
   * keyed by) to the outbox; they reach the labels store and the lists after the commit. If anything fails, nothing is
   * written and the case stays as it was (a retry is safe). The same verdict and reason on a case already closed with
   * them answers the case again and writes nothing.
   * @throws AppError `conflict` on a case closed with another verdict; `forbidden` for `addToList` without the lead role.
   */
  async verdict(headers: Lookup, rawId: string | undefined, body: unknown): Promise<{ case: Case; label: unknown }> {
    const v = await this.verdictChange(headers, rawId, body);
    return { case: v.case, label: v.label };
  }

  /**
   * {@link verdict}, with who gave it and the case's state and assignee before it (the audit trail's old value;
   * lib/governance), running `inTransaction` in the verdict's transaction (not for a repeated verdict).
   */
  async verdictChange(
    headers: Lookup,
    rawId: string | undefined,
    body: unknown,
    inTransaction?: VerdictStep,
  ): Promise<VerdictChange> {
    const actor = this.d.identity.require(headers, WORKERS);
    const id = parseCaseId(rawId);
    const v = parseVerdictBody(body);
    if (v.addToList !== undefined && !actor.roles.includes('lead'))
      throw new AppError('forbidden', 'Adding to a list from a case needs the role lead.');
    const at = this.d.wallClock();
    const base = {
      actor: actor.name,
      verdict: v.verdict,
      ...(v.reason === undefined ? {} : { reason: v.reason }),
      ...(v.addToList === undefined ? {} : { list: v.addToList.list }),
    };
    const changeOf = (closed: Case, prior: Case): VerdictChange => ({
      ...base,
      case: closed,
      label: labelOf(prior.transactionId, v.verdict, at),
      prior: prior.assignee === undefined ? { state: prior.state } : { state: prior.state, assignee: prior.assignee },
      repeated: false,
    });
    const r = await this.d.store.close(id, actor.name, v.verdict, v.reason, at, async (t, c) => {
      const change = changeOf(c.case, c.prior);
      await t.enqueue({ kind: 'label', payload: change.label });
      if (v.addToList !== undefined)
        await t.enqueue({ kind: 'list', payload: listAddition(this.d.lists, v.addToList, c.prior) });
      await inTransaction?.(t, change);
    });
    if (!r.ok) throw changedError(r.why);
    if (r.repeated) {
      const closedAt = Date.parse(r.case.closedAt ?? '');
      return {
        ...base,
        case: r.case,
        label: labelOf(r.case.transactionId, v.verdict, Number.isFinite(closedAt) ? closedAt : at),
        prior: { state: 'closed' },
        repeated: true,
      };
    }
    this.quietly(() => this.d.committed?.());
    this.quietly(() => this.d.on?.verdict?.({ verdict: v.verdict }));
    return changeOf(r.case, r.prior);
  }

  /** Runs a notification; its failure never fails the verdict, which has committed. */
  private quietly(fn: () => void): void {
    try {
      fn();
    } catch {
      // counting or waking must not fail a committed verdict
    }
  }
}

/** The case answer's `recentPayments` and `recentPaymentsKeptDays` (nothing without a reader; never throws). */
async function recentOf(
  recent: RecentPayments | undefined,
  userId: string,
): Promise<Pick<CaseDetail, 'recentPayments' | 'recentPaymentsKeptDays'>> {
  if (recent === undefined) return {};
  const keptDays = Math.round(recent.ttlMs / 86_400_000);
  const payments = await recent.forUser(userId).catch(() => undefined);
  return payments === undefined
    ? { recentPaymentsKeptDays: keptDays }
    : { recentPayments: payments, recentPaymentsKeptDays: keptDays };
}

/** The label a verdict makes for `transactionId` at `at`. */
function labelOf(transactionId: string, verdict: 'fraud' | 'legit', at: number): OutboxLabel {
  return { transactionId, label: verdict, reportedAt: new Date(at).toISOString(), source: 'case' };
}
