/**
 * {@link CaseStore} on PostgreSQL: the same SQL on a server (`pg`) and on PGlite. Each change and its
 * `case_events` entry are one statement (a data-modifying CTE), so they commit together; a verdict's close, its
 * event, its outbox rows and its step's rows (the audit entry) are one transaction.
 */
import { writeCaseEvents } from './case-events';
import { enqueueOutbox } from './case-outbox';
import { caseAnalytics, filterClauses, params, slaBreaches } from './case-queries';
import { DEFAULT_QUEUES, compileQueues, type CaseRouter } from './case-queues';
import { CASTS, COLS, INSERT_COLS, insertValues, iso, toCase } from './case-rows';
import type {
  Case,
  CaseAnalytics,
  CaseAssign,
  CaseChange,
  CaseClose,
  CaseEvent,
  CaseFilter,
  CasePage,
  CasePosition,
  CaseStore,
  CloseStep,
  NewCase,
  NextFilter,
  Verdict,
} from './case-store';
import type { CaseSignals } from './case-signals';
import { migrate, type MigrationSet } from '../platform/sql/migrate';
import { CASE_MIGRATIONS } from './migrations';
import type { SqlClient } from '../platform/sql/sql-client';

/**
 * One case per transaction (the first in the batch wins), in decision order (a stable sort: equal times keep the
 * batch's order). The rows are inserted in this order, so their ids ascend with the decision time within a batch;
 * batches are written as the intake queue delivers them, so ids ascend across batches too.
 */
function inDecisionOrder(cases: readonly NewCase[]): NewCase[] {
  const first = new Map<string, NewCase>();
  for (const c of cases) if (!first.has(c.transactionId)) first.set(c.transactionId, c);
  return [...first.values()].sort((a, b) => a.decidedAt - b.decidedAt);
}

/** The case store on a PostgreSQL {@link SqlClient}. */
export class SqlCaseStore implements CaseStore {
  private constructor(
    private readonly db: SqlClient,
    /** Routes each case to its queue as it is opened (lib/cases/case-queues.ts). */
    private readonly router: CaseRouter,
  ) {}

  /** The connection the store runs on (the governance tables live beside the cases). */
  get sql(): SqlClient {
    return this.db;
  }

  /**
   * Applies the migrations not applied yet (the case store's and `shared`, in version order), then serves. Disposing
   * the store closes `db`. Cases are routed by `router` (default: {@link DEFAULT_QUEUES}, one queue).
   * @param shared the migrations of the subsystems whose tables live in the case database: the governance's and the
   * webhooks' (the store writes the webhook deliveries of a case change in its transaction, so they are needed).
   */
  static async create(
    db: SqlClient,
    router: CaseRouter = compileQueues(DEFAULT_QUEUES),
    shared: readonly MigrationSet[] = [],
  ): Promise<SqlCaseStore> {
    await migrate(db, [CASE_MIGRATIONS, ...shared]);
    return new SqlCaseStore(db, router);
  }

  async open(cases: readonly NewCase[], at: number): Promise<number> {
    const unique = inDecisionOrder(cases);
    if (unique.length === 0) return 0;
    const openedAt = new Date(at).toISOString();
    const params: unknown[] = [openedAt];
    const rows = unique.map((c) => {
      const vals = insertValues(c, openedAt, this.router.route(c));
      const refs = vals.map((v, i) => {
        params.push(v);
        return `$${params.length}${CASTS[INSERT_COLS[i] ?? 'transaction_id'] ?? ''}`;
      });
      return `(${refs.join(', ')})`;
    });
    // the cases and their `review.opened` events (lib/cases/case-events.ts) commit together
    return this.db.transaction(async (tx) => {
      const out = await tx.query(
        `WITH ins AS (
         INSERT INTO cases (${INSERT_COLS.join(', ')}) VALUES ${rows.join(', ')}
         ON CONFLICT (transaction_id) DO NOTHING RETURNING id)
       INSERT INTO case_events (case_id, at, actor, action) SELECT id, $1::timestamptz, 'system', 'opened' FROM ins
       RETURNING case_id`,
        params,
      );
      await writeCaseEvents(
        tx,
        'review.opened',
        out.map((r) => String(r['case_id'])),
        at,
      );
      return out.length;
    });
  }

  async get(id: string): Promise<{ case: Case; events: CaseEvent[]; signals?: CaseSignals } | undefined> {
    // the signals only here: the lists and the queue never read them
    const rows = await this.db.query(`SELECT ${COLS}, signals FROM cases WHERE id = $1::bigint`, [id]);
    const row = rows[0];
    if (row === undefined) return undefined;
    const events = await this.db.query(
      `SELECT at, actor, action, detail FROM case_events WHERE case_id = $1::bigint ORDER BY id`,
      [id],
    );
    const signals = row['signals'];
    return {
      case: toCase(row),
      ...(signals === null || signals === undefined ? {} : { signals: signals as CaseSignals }),
      events: events.map((e) => ({
        at: iso(e['at']) ?? '',
        actor: String(e['actor']),
        action: String(e['action']),
        ...(e['detail'] === null || e['detail'] === undefined
          ? {}
          : { detail: e['detail'] as Record<string, unknown> }),
      })),
    };
  }

  async list(filter: CaseFilter, order: 'oldest' | 'newest', limit: number, after?: CasePosition): Promise<CasePage> {
    const { values, p } = params();
    const where = filterClauses(filter, p);
    const cmp = order === 'oldest' ? '>' : '<';
    if (after !== undefined)
      where.push(`(decided_at, id) ${cmp} (${p(after.decidedAt, '::timestamptz')}, ${p(after.id, '::bigint')})`);
    const dir = order === 'oldest' ? 'ASC' : 'DESC';
    const rows = await this.db.query(
      `SELECT ${COLS} FROM cases ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
       ORDER BY decided_at ${dir}, id ${dir} LIMIT ${p(limit + 1, '::int')}`,
      values,
    );
    const cases = rows.slice(0, limit).map(toCase);
    const last = cases[cases.length - 1];
    return rows.length > limit && last !== undefined
      ? { cases, next: { decidedAt: last.decidedAt, id: last.id } }
      : { cases };
  }

  async next(actor: string, at: number, filter: NextFilter = {}): Promise<Case | undefined> {
    const { values, p } = params([actor, new Date(at).toISOString()]);
    const narrowed = filterClauses(filter, p)
      .map((w) => ` AND ${w}`)
      .join('');
    const rows = await this.db.query(
      `WITH picked AS (
         UPDATE cases SET state = 'assigned', assignee = $1, assigned_at = $2::timestamptz
         WHERE id = (SELECT id FROM cases WHERE state = 'open' AND assignee IS NULL${narrowed}
                     ORDER BY decided_at, id LIMIT 1 FOR UPDATE SKIP LOCKED)
         RETURNING *),
       ev AS (INSERT INTO case_events (case_id, at, actor, action) SELECT id, $2::timestamptz, $1, 'assigned' FROM picked)
       SELECT ${COLS} FROM picked`,
      values,
    );
    return rows[0] === undefined ? undefined : toCase(rows[0]);
  }

  /** Runs `update` (its `$1` is the id, `$2` the time, `$3` the actor) on a case not closed, with its event. */
  private async change(
    id: string,
    set: string,
    params: readonly unknown[],
    at: number,
    actor: string,
    action: string,
    detail: Record<string, unknown> | undefined,
    db: Pick<SqlClient, 'query'> = this.db,
  ): Promise<CaseChange> {
    const n = params.length;
    const rows = await db.query(
      `WITH changed AS (
         UPDATE cases SET ${set} WHERE id = $1::bigint AND state <> 'closed' RETURNING *),
       ev AS (INSERT INTO case_events (case_id, at, actor, action, detail)
              SELECT id, $2::timestamptz, $3, $${n + 4}, $${n + 5}::jsonb FROM changed)
       SELECT ${COLS} FROM changed`,
      [id, new Date(at).toISOString(), actor, ...params, action, detail === undefined ? null : JSON.stringify(detail)],
    );
    if (rows[0] !== undefined) return { ok: true, case: toCase(rows[0]) };
    const exists = await db.query('SELECT state FROM cases WHERE id = $1::bigint', [id]);
    return { ok: false, why: exists.length === 0 ? 'not_found' : 'closed' };
  }

  async addNote(id: string, actor: string, text: string, at: number): Promise<CaseChange> {
    // a note changes no column: `id = id` keeps the row, and the CTE records the event
    return this.change(id, 'id = id', [], at, actor, 'note', { text });
  }

  async assign(id: string, actor: string, assignee: string, at: number): Promise<CaseAssign> {
    return this.db.transaction(async (tx): Promise<CaseAssign> => {
      // the row stays locked until the commit: the state and assignee read are the ones this change replaces
      const rows = await tx.query('SELECT state, assignee FROM cases WHERE id = $1::bigint FOR UPDATE', [id]);
      const row = rows[0];
      if (row === undefined) return { ok: false, why: 'not_found' };
      if (row['state'] === 'closed') return { ok: false, why: 'closed' };
      const changed = await this.change(
        id,
        `state = 'assigned', assignee = $4, assigned_at = $2::timestamptz`,
        [assignee],
        at,
        actor,
        'reassigned',
        { assignee },
        tx,
      );
      if (!changed.ok) return changed;
      const state = String(row['state']) as Case['state'];
      const before = row['assignee'];
      return {
        ok: true,
        case: changed.case,
        prior: before === null || before === undefined ? { state } : { state, assignee: String(before) },
      };
    });
  }

  async close(
    id: string,
    actor: string,
    verdict: Verdict,
    reason: string | undefined,
    at: number,
    step?: CloseStep,
  ): Promise<CaseClose> {
    return this.db.transaction(async (tx): Promise<CaseClose> => {
      // the row stays locked until the commit: a concurrent verdict waits, then finds it closed
      const rows = await tx.query(`SELECT ${COLS} FROM cases WHERE id = $1::bigint FOR UPDATE`, [id]);
      const row = rows[0];
      if (row === undefined) return { ok: false, why: 'not_found' };
      const prior = toCase(row);
      if (prior.state === 'closed')
        return prior.verdict === verdict && prior.verdictReason === reason
          ? { ok: true, repeated: true, case: prior }
          : { ok: false, why: 'closed' };
      const closed = await this.change(
        id,
        `state = 'closed', verdict = $4, verdict_reason = $5, closed_at = $2::timestamptz, closed_by = $3`,
        [verdict, reason ?? null],
        at,
        actor,
        'verdict',
        { verdict, ...(reason === undefined ? {} : { reason }) },
        tx,
      );
      if (!closed.ok) return closed;
      await writeCaseEvents(tx, 'review.closed', [id], at);
      // a throw rolls back the update, its event and every row the step wrote
      await step?.({ query: tx.query, enqueue: (m) => enqueueOutbox(tx, id, m, at) }, { prior, case: closed.case });
      return { ok: true, repeated: false, case: closed.case, prior };
    });
  }

  async userCases(userId: string, exceptId: string, limit: number): Promise<Case[]> {
    const rows = await this.db.query(
      `SELECT ${COLS} FROM cases WHERE user_id = $1 AND id <> $2::bigint ORDER BY decided_at DESC, id DESC LIMIT $3::int`,
      [userId, exceptId, limit],
    );
    return rows.map(toCase);
  }

  async eraseUser(userId: string): Promise<number> {
    return (await this.db.query('DELETE FROM cases WHERE user_id = $1 RETURNING 1', [userId])).length;
  }

  async deleteDecidedBefore(before: number): Promise<number> {
    return (
      await this.db.query('DELETE FROM cases WHERE decided_at < $1::timestamptz RETURNING 1', [
        new Date(before).toISOString(),
      ])
    ).length;
  }

  async openStats(): Promise<{ open: number; oldestDecidedAt?: string }> {
    const rows = await this.db.query(
      `SELECT count(*)::int AS open, min(decided_at) AS oldest FROM cases WHERE state <> 'closed'`,
    );
    const r = rows[0] ?? {};
    const oldest = iso(r['oldest']);
    return { open: Number(r['open'] ?? 0), ...(oldest === undefined ? {} : { oldestDecidedAt: oldest }) };
  }

  slaBreaches(at: number): Promise<{ queue: string; count: number }[]> {
    return slaBreaches(this.db, at);
  }

  analytics(from: number, to: number): Promise<CaseAnalytics> {
    return caseAnalytics(this.db, from, to);
  }

  async dispose(): Promise<void> {
    await this.db.dispose();
  }
}
