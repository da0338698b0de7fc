/**
 * The audit trail's vocabulary: who changed what, when, from which value to which. Entries are appended and never
 * updated or deleted by the service (the table refuses it).
 * @module
 */
import type { SqlClient } from '../platform/sql/sql-client';

/** What an entry is about. */
export type AuditKind = 'ruleset' | 'list' | 'model' | 'case' | 'signals' | 'webhook';

/** An entry to append. */
export interface AuditEntry {
  /** Who acted: an identity's name, `admin-key` for a key-authenticated admin call, `blob-upload` for an upload. */
  readonly actor: string;
  readonly kind: AuditKind;
  /** The artifact's or list's name, or the case id. */
  readonly name: string;
  /** `draft`, `submit`, `approve`, `reject`, `promote`, `rollback`, `traffic`, `upload`, `add`, `remove`, `verdict`, `assign`. */
  readonly action: string;
  /** The value before the change (`null` when there was none). */
  readonly oldValue: unknown;
  /** The value after the change. */
  readonly newValue: unknown;
}

/** An entry as stored. */
export interface AuditEvent extends AuditEntry {
  readonly id: string;
  /** ISO 8601. */
  readonly at: string;
}

/** A filter of {@link AuditLog.list}. */
export interface AuditQuery {
  readonly kind?: AuditKind;
  readonly name?: string;
  readonly actor?: string;
  /** Epoch ms, inclusive. */
  readonly from?: number;
  /** Epoch ms, exclusive. */
  readonly to?: number;
  /** The cursor of the previous page. */
  readonly cursor?: string;
  /** Page size. */
  readonly limit: number;
}

/** The audit trail. */
export interface AuditLog {
  /** Appends an entry, stamped with the time now. @throws AppError `dependency_unavailable`. */
  record(entry: AuditEntry): Promise<void>;
  /** Appends an entry on `tx`, the caller's transaction in the case database (a verdict's): committed with it. */
  recordIn(tx: Pick<SqlClient, 'query'>, entry: AuditEntry): Promise<void>;
  /** Entries newest first, one page; `cursor` when there are more. */
  list(query: AuditQuery): Promise<{ events: AuditEvent[]; cursor?: string }>;
}
