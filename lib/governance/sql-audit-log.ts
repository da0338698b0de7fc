/**
 * The audit trail in the case database's `audit_events` table (migration `002_audit_events`; the table refuses UPDATE,
 * DELETE and TRUNCATE). Pages newest first by `(at, id)` with a keyset cursor.
 * @module
 */
import type { SqlClient } from '../platform/sql/sql-client';
import { AppError } from '../errors/errors';
import type { AuditEntry, AuditEvent, AuditLog, AuditQuery } from './audit-log';
import { AUDIT_MAX_LIMIT, decodeAuditCursor, encodeAuditCursor } from './audit-query';

/** Most items of an array kept in a stored value (a list add of more values keeps the first 1,000). */
export const AUDIT_MAX_ARRAY_ITEMS = 1000;
/** Longest string kept in a stored value, characters (longer ones are cut and end with `…`). */
export const AUDIT_MAX_STRING_CHARS = 1000;
/** Largest stored value, characters of JSON; a larger one is stored as `{ "truncated": true, "chars": n }`. */
export const AUDIT_MAX_VALUE_CHARS = 64 * 1024;

/**
 * A value bounded for storage: arrays at most {@link AUDIT_MAX_ARRAY_ITEMS} items, strings at most
 * {@link AUDIT_MAX_STRING_CHARS} characters, the whole at most {@link AUDIT_MAX_VALUE_CHARS} characters of JSON;
 * `undefined` is `null`.
 */
export function boundedValue(v: unknown): unknown {
  if (v === undefined) return null;
  const json = JSON.stringify(v, (_k, x: unknown) => {
    if (Array.isArray(x) && x.length > AUDIT_MAX_ARRAY_ITEMS) return x.slice(0, AUDIT_MAX_ARRAY_ITEMS);
    if (typeof x === 'string' && x.length > AUDIT_MAX_STRING_CHARS) return `${x.slice(0, AUDIT_MAX_STRING_CHARS)}…`;
    return x;
  }) as string | undefined;
  if (json === undefined) return null;
  if (json.length > AUDIT_MAX_VALUE_CHARS) return { truncated: true, chars: json.length };
  return JSON.parse(json) as unknown;
}

/** Dependencies of a {@link SqlAuditLog}. */
export interface SqlAuditLogDeps {
  /** The case database's connection, obtained on each call (`Cases.sql()`: throws while the store is not open). */
  readonly sql: () => SqlClient;
  /** Wall clock, epoch ms (each entry's time). */
  readonly wallClock: () => number;
}

interface Row extends Record<string, unknown> {
  id: string;
  at_ms: number | string;
  actor: string;
  kind: AuditEvent['kind'];
  name: string;
  action: string;
  old_value: unknown;
  new_value: unknown;
}

function unavailable(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('dependency_unavailable', 'The audit database is unavailable.', { cause: err });
}

/** The audit trail over SQL. */
export class SqlAuditLog implements AuditLog {
  constructor(private readonly d: SqlAuditLogDeps) {}

  /** Appends an entry at the time now, its values bounded ({@link boundedValue}). */
  async record(entry: AuditEntry): Promise<void> {
    try {
      await this.recordIn(this.d.sql(), entry);
    } catch (err) {
      throw unavailable(err);
    }
  }

  /** {@link record} on `tx` (the caller's transaction): the entry commits or rolls back with it. */
  async recordIn(tx: Pick<SqlClient, 'query'>, entry: AuditEntry): Promise<void> {
    await tx.query(
      `INSERT INTO audit_events (at, actor, kind, name, action, old_value, new_value)
       VALUES ($1::timestamptz, $2, $3, $4, $5, $6::jsonb, $7::jsonb)`,
      [
        new Date(this.d.wallClock()).toISOString(),
        entry.actor,
        entry.kind,
        entry.name,
        entry.action,
        JSON.stringify(boundedValue(entry.oldValue)),
        JSON.stringify(boundedValue(entry.newValue)),
      ],
    );
  }

  /** One page newest first (at most {@link AUDIT_MAX_LIMIT}); `cursor` when there may be more. */
  async list(query: AuditQuery): Promise<{ events: AuditEvent[]; cursor?: string }> {
    const limit = Math.max(1, Math.min(AUDIT_MAX_LIMIT, Math.floor(query.limit)));
    const where: string[] = [];
    const params: unknown[] = [];
    const add = (sql: (p: string) => string, v: unknown): void => {
      params.push(v);
      where.push(sql(`$${params.length}`));
    };
    if (query.kind !== undefined) add((p) => `kind = ${p}`, query.kind);
    if (query.name !== undefined) add((p) => `name = ${p}`, query.name);
    if (query.actor !== undefined) add((p) => `actor = ${p}`, query.actor);
    if (query.from !== undefined) add((p) => `at >= ${p}::timestamptz`, new Date(query.from).toISOString());
    if (query.to !== undefined) add((p) => `at < ${p}::timestamptz`, new Date(query.to).toISOString());
    if (query.cursor !== undefined) {
      const c = decodeAuditCursor(query.cursor);
      if (c === undefined)
        throw new AppError('validation_failed', '1 invalid field.', {
          errors: [{ path: 'cursor', message: 'must be a cursor a previous page returned' }],
        });
      params.push(new Date(c.at).toISOString(), c.id);
      where.push(`(at, id) < ($${params.length - 1}::timestamptz, $${params.length}::bigint)`);
    }
    params.push(limit + 1);
    const text = `SELECT id::text AS id, (extract(epoch FROM at) * 1000)::float8 AS at_ms, actor, kind, name, action,
        old_value, new_value
      FROM audit_events ${where.length === 0 ? '' : `WHERE ${where.join(' AND ')}`}
      ORDER BY at DESC, id DESC LIMIT $${params.length}`;
    let rows: Row[];
    try {
      rows = await this.d.sql().query<Row>(text, params);
    } catch (err) {
      throw unavailable(err);
    }
    const events = rows.slice(0, limit).map((r) => ({
      id: r.id,
      at: new Date(Math.round(Number(r.at_ms))).toISOString(),
      actor: r.actor,
      kind: r.kind,
      name: r.name,
      action: r.action,
      oldValue: r.old_value ?? null,
      newValue: r.new_value ?? null,
    }));
    const last = events[events.length - 1];
    return rows.length > limit && last !== undefined
      ? { events, cursor: encodeAuditCursor({ at: Date.parse(last.at), id: last.id }) }
      : { events };
  }
}
