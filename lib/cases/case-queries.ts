/**
 * SQL of the queue's reads that {@link SqlCaseStore} shares or keeps apart: the filter of the list and of `next`,
 * the SLA breaches of the open cases, and the analytics of closed cases (handling time, verdict mix, false-positive
 * rate and SLA breaches, in total, per queue and per rule).
 * @module
 */
import type { CaseAnalytics, CaseFigures, CaseFilter } from './case-store';
import type { SqlClient } from '../platform/sql/sql-client';

/** Adds a parameter, returning its reference (`$n` and the cast). */
export type Param = (value: unknown, cast?: string) => string;

/** The WHERE clauses of `filter` (all must hold), their values added with `p`. */
export function filterClauses(filter: CaseFilter, p: Param): string[] {
  const where: string[] = [];
  if (filter.status !== undefined) where.push(`state = ${p(filter.status)}`);
  if (filter.rule !== undefined) where.push(`${p(filter.rule)} = ANY(rule_ids)`);
  if (filter.merchantId !== undefined) where.push(`merchant_id = ${p(filter.merchantId)}`);
  if (filter.minScore !== undefined) where.push(`score >= ${p(filter.minScore, '::float8')}`);
  if (filter.decidedBefore !== undefined)
    where.push(`decided_at < ${p(new Date(filter.decidedBefore).toISOString(), '::timestamptz')}`);
  if (filter.queue !== undefined) where.push(`queue = ${p(filter.queue)}`);
  if (filter.assignee !== undefined) where.push(`assignee = ${p(filter.assignee)}`);
  if (filter.transactionId !== undefined) where.push(`transaction_id = ${p(filter.transactionId)}`);
  if (filter.userId !== undefined) where.push(`user_id = ${p(filter.userId)}`);
  return where;
}

/** A parameter list and its {@link Param}. */
export function params(initial: readonly unknown[] = []): { readonly values: unknown[]; readonly p: Param } {
  const values = [...initial];
  return {
    values,
    p: (v, cast = '') => {
      values.push(v);
      return `$${values.length}${cast}`;
    },
  };
}

/** Open cases past their SLA deadline at `at`, per queue. */
export async function slaBreaches(db: SqlClient, at: number): Promise<{ queue: string; count: number }[]> {
  const rows = await db.query(
    `SELECT queue, count(*)::int AS n FROM cases
     WHERE state <> 'closed' AND sla_due_at < $1::timestamptz GROUP BY queue ORDER BY queue`,
    [new Date(at).toISOString()],
  );
  return rows.map((r) => ({ queue: String(r['queue']), count: Number(r['n']) }));
}

/** The most groups per dimension the analytics answer (queues and rules are the deployment's own, so few). */
const MAX_GROUPS = 200;

const FIGURES = `count(*)::int AS closed,
  count(*) FILTER (WHERE verdict = 'fraud')::int AS fraud,
  count(*) FILTER (WHERE verdict = 'legit')::int AS legit,
  percentile_cont(0.5) WITHIN GROUP (ORDER BY handling) AS median,
  percentile_cont(0.9) WITHIN GROUP (ORDER BY handling) AS p90,
  count(*) FILTER (WHERE breached)::int AS breached`;

function figures(r: Record<string, unknown>): CaseFigures {
  const closed = Number(r['closed'] ?? 0);
  const legit = Number(r['legit'] ?? 0);
  const median = r['median'];
  const p90 = r['p90'];
  return {
    closed,
    fraud: Number(r['fraud'] ?? 0),
    legit,
    falsePositiveRate: closed === 0 ? null : legit / closed,
    handlingSeconds:
      closed === 0 || median === null || p90 === null ? null : { median: Number(median), p90: Number(p90) },
    slaBreached: Number(r['breached'] ?? 0),
  };
}

/** Figures of the cases closed in [`from`, `to`), ms since the epoch. */
export async function caseAnalytics(db: SqlClient, from: number, to: number): Promise<CaseAnalytics> {
  const rows = await db.query(
    `WITH c AS (
       SELECT queue, rule_ids, verdict, extract(epoch FROM closed_at - opened_at)::float8 AS handling,
              (sla_due_at IS NOT NULL AND closed_at > sla_due_at) AS breached
       FROM cases WHERE state = 'closed' AND closed_at >= $1::timestamptz AND closed_at < $2::timestamptz)
     (SELECT 'total' AS dim, NULL::text AS key, ${FIGURES} FROM c)
     UNION ALL
     (SELECT 'queue', queue, ${FIGURES} FROM c GROUP BY queue ORDER BY count(*) DESC, queue LIMIT ${MAX_GROUPS})
     UNION ALL
     (SELECT 'rule', u.rule, ${FIGURES} FROM c CROSS JOIN LATERAL unnest(c.rule_ids) AS u(rule)
      GROUP BY u.rule ORDER BY count(*) DESC, u.rule LIMIT ${MAX_GROUPS})`,
    [new Date(from).toISOString(), new Date(to).toISOString()],
  );
  const of = (dim: string): Record<string, unknown>[] => rows.filter((r) => r['dim'] === dim);
  const key = (r: Record<string, unknown>): string | null => (r['key'] === null ? null : String(r['key']));
  const byCount =
    (name: (g: CaseFigures & { queue?: string | null; rule?: string }) => string) =>
    <T extends CaseFigures>(a: T, b: T): number =>
      b.closed - a.closed || (name(a) < name(b) ? -1 : name(a) > name(b) ? 1 : 0);
  return {
    total: figures(of('total')[0] ?? {}),
    byQueue: of('queue')
      .map((r) => ({ queue: key(r), ...figures(r) }))
      .sort(byCount((g) => g.queue ?? '')),
    byRule: of('rule')
      .map((r) => ({ rule: key(r) ?? '', ...figures(r) }))
      .sort(byCount((g) => g.rule ?? '')),
  };
}
