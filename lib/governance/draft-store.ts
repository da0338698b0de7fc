/**
 * Ruleset drafts in PostgreSQL beside the cases (`ruleset_drafts`, migration 3): a draft's document, author,
 * state, backtest and decision. A state change is a compare-and-set on the state, so two leads deciding at once
 * cannot both win.
 * @module
 */
import { AppError } from '../errors/errors';
import type { SqlClient } from '../platform/sql/sql-client';

/** Where a draft stands: only `approved` may be promoted, canaried or shadowed. */
export type DraftState = 'draft' | 'submitted' | 'approved' | 'rejected';

/** A draft's backtest, as stored with it. */
export interface DraftBacktest {
  readonly state: 'running' | 'done' | 'failed';
  /** The window, ISO 8601. */
  readonly from: string;
  readonly to: string;
  readonly progress?: { readonly replayed: number; readonly total: number };
  readonly result?: unknown;
  readonly error?: string;
  /** When it was last written, ISO 8601 (a `running` one not written for long was interrupted). */
  readonly at: string;
}

/** A draft of a ruleset version. */
export interface Draft {
  readonly name: string;
  readonly version: string;
  readonly document: unknown;
  readonly author: string;
  readonly state: DraftState;
  readonly backtest?: DraftBacktest;
  readonly approver?: string;
  readonly comment?: string;
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** At most this many drafts are listed (newest first). */
export const DRAFTS_LISTED = 100;

const COLUMNS = 'name, version, document, author, state, backtest, approver, comment, created_at, updated_at';

function toDraft(r: Record<string, unknown>): Draft {
  const iso = (v: unknown): string => (v instanceof Date ? v.toISOString() : new Date(String(v)).toISOString());
  return {
    name: String(r['name']),
    version: String(r['version']),
    document: r['document'],
    author: String(r['author']),
    state: r['state'] as DraftState,
    ...(r['backtest'] === null || r['backtest'] === undefined ? {} : { backtest: r['backtest'] as DraftBacktest }),
    ...(r['approver'] === null || r['approver'] === undefined ? {} : { approver: String(r['approver']) }),
    ...(r['comment'] === null || r['comment'] === undefined ? {} : { comment: String(r['comment']) }),
    createdAt: iso(r['created_at']),
    updatedAt: iso(r['updated_at']),
  };
}

/** The drafts table. */
export class DraftStore {
  /** @param db the case database's connection, when it is open (throws `dependency_unavailable` until then). */
  constructor(private readonly db: () => SqlClient) {}

  /** Stores a new draft. @throws AppError `conflict` when that version already has a draft. */
  async create(d: Omit<Draft, 'backtest' | 'approver' | 'comment' | 'updatedAt'>): Promise<Draft> {
    const rows = await this.db().query(
      `INSERT INTO ruleset_drafts (name, version, document, author, state, created_at, updated_at)
       VALUES ($1, $2, $3, $4, $5, $6, $6) ON CONFLICT (name, version) DO NOTHING RETURNING ${COLUMNS}`,
      [d.name, d.version, JSON.stringify(d.document), d.author, d.state, d.createdAt],
    );
    const r = rows[0];
    if (r === undefined) throw new AppError('conflict', `Ruleset ${d.name} ${d.version} already has a draft.`);
    return toDraft(r);
  }

  /** A draft, or `undefined`. */
  async get(name: string, version: string): Promise<Draft | undefined> {
    const rows = await this.db().query(`SELECT ${COLUMNS} FROM ruleset_drafts WHERE name = $1 AND version = $2`, [
      name,
      version,
    ]);
    return rows[0] === undefined ? undefined : toDraft(rows[0]);
  }

  /** The newest drafts of a ruleset (at most {@link DRAFTS_LISTED}), without their documents. */
  async list(name: string): Promise<Draft[]> {
    const rows = await this.db().query(
      `SELECT name, version, 'null'::jsonb AS document, author, state, NULL::jsonb AS backtest, approver, comment,
              created_at, updated_at
       FROM ruleset_drafts WHERE name = $1 ORDER BY updated_at DESC, version LIMIT ${DRAFTS_LISTED}`,
      [name],
    );
    return rows.map((r) => {
      const { document: _omitted, ...d } = toDraft(r);
      return d as Draft;
    });
  }

  /**
   * Changes a draft whose state is one of `from`; returns it changed, or `undefined` when it is absent or in
   * another state (someone else changed it first).
   */
  async update(
    name: string,
    version: string,
    from: readonly DraftState[],
    change: { state?: DraftState; backtest?: DraftBacktest; approver?: string; comment?: string; at: string },
  ): Promise<Draft | undefined> {
    const rows = await this.db().query(
      `UPDATE ruleset_drafts SET
         state = COALESCE($4, state),
         backtest = COALESCE($5::jsonb, backtest),
         approver = COALESCE($6, approver),
         comment = COALESCE($7, comment),
         updated_at = $8
       WHERE name = $1 AND version = $2 AND state = ANY($3::text[]) RETURNING ${COLUMNS}`,
      [
        name,
        version,
        [...from],
        change.state ?? null,
        change.backtest === undefined ? null : JSON.stringify(change.backtest),
        change.approver ?? null,
        change.comment ?? null,
        change.at,
      ],
    );
    return rows[0] === undefined ? undefined : toDraft(rows[0]);
  }
}
