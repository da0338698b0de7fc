/**
 * The recording of the audit trail: decorators around the admin paths (model and ruleset rollout, lists), the case
 * verdict and reassignment, and the blob uploads. Each change is performed first, then its entry is appended (the old and new values are
 * only known around the change). A failed change records nothing. When the entry cannot be appended (the database
 * is unavailable), the change has happened but its caller gets 503 `dependency_unavailable` and the log an error naming
 * the entry's kind, name and action: a change never passes silently unaudited. A case verdict is the exception: its
 * entry is written in the verdict's own transaction, so the verdict and its entry commit together or not at all. Without a case database
 * (`CASE_STORE=none`) there is no audit trail: the decorators pass through and {@link Audit.list} answers 404.
 * Entries never hold payment data: a verdict's entry holds the case's state, assignee, verdict, reason and list name.
 * @module
 */
import type { AssignChange, Lookup, VerdictChange, VerdictStep } from '../cases/case-service';
import type { SqlClient } from '../platform/sql/sql-client';
import type { Case } from '../cases/case-store';
import { AppError } from '../errors/errors';
import { AwaitingApproval, type ArtifactAdmin } from '../http/admin-routes';
import { PRINCIPAL_HEADER, type Identity } from '../identity/identity';
import { decodePrincipal } from '../identity/principal';
import type { UploadOutcome } from '../rollout/upload-pipeline';
import type { Logger } from '../platform/logger';
import type { AuditEntry, AuditEvent, AuditLog } from './audit-log';
import { parseAuditQuery } from './audit-query';

/** The actor of a key-authenticated admin call without a principal. */
export const ADMIN_KEY_ACTOR = 'admin-key';
/** The actor of a blob upload. */
export const BLOB_UPLOAD_ACTOR = 'blob-upload';

/** The lists path of the admin routes (lib/decisioning's `Decisioning`). */
export interface ListsAdmin {
  addToList(name: string, body: unknown): Promise<unknown>;
  removeFromList(name: string, value: string): Promise<unknown>;
  listPage(name: string, cursor: string | undefined): Promise<unknown>;
}

/** What gives a verdict with its old and new values (lib/cases' `CaseService`), running a step in its transaction. */
export interface VerdictSource {
  verdictChange(
    headers: Lookup,
    rawId: string | undefined,
    body: unknown,
    inTransaction?: VerdictStep,
  ): Promise<VerdictChange>;
}

/** What reassigns a case, with its state and assignee before (lib/cases' `CaseService`). */
export interface AssignSource {
  assignChange(headers: Lookup, rawId: string | undefined, body: unknown): Promise<AssignChange>;
}

/** Dependencies of an {@link Audit}. */
export interface AuditDeps {
  /** The trail; `undefined` without a case database. */
  readonly log: AuditLog | undefined;
  /** Who reads the trail (leads) and the mode deciding whether admin calls' principals are read. */
  readonly identity: Identity;
  readonly logger: Logger;
}

const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null;
const str = (v: unknown): string | null => (typeof v === 'string' ? v : null);

/** A status view's candidate: version and shares. */
function candidateOf(v: unknown): unknown {
  if (!isRecord(v)) return null;
  const version = str(v['version']);
  return { version, canaryPercent: v['canaryPercent'] ?? null, shadowPercent: v['shadowPercent'] ?? null };
}

/**
 * The part of a status view a rollout change moves (every kind's view, lib/rollout/rollout-status.ts): the active
 * version, the previous one, the candidate and its shares (never the shadow statistics or the instances).
 */
export function pointerOf(status: unknown): unknown {
  if (!isRecord(status)) return null;
  const version = (v: unknown): string | null => (isRecord(v) ? str(v['version']) : null);
  return {
    active: version(status['active']),
    previous: version(status['previous']),
    candidate: candidateOf(status['candidate']),
  };
}

/** The body's `values` and `ttlSeconds` (the lists path validated them). */
function added(body: unknown): object {
  if (!isRecord(body)) return {};
  return {
    values: body['values'] ?? null,
    ...(body['ttlSeconds'] === undefined ? {} : { ttlSeconds: body['ttlSeconds'] }),
  };
}

/** The log fields of an audit entry that could not be recorded (never its values). */
function failure(entry: AuditEntry, err: unknown): Record<string, string> {
  const { kind, name, action, actor } = entry;
  return { kind, name, action, actor, error: err instanceof Error ? err.message : String(err) };
}

/** The audit trail's recording and reading. */
export class Audit {
  constructor(private readonly d: AuditDeps) {}

  /** Who is acting on the people routes (lib/governance/list-changes.ts reads its roles). */
  get identity(): Identity {
    return this.d.identity;
  }

  /** Whether entries are recorded (a case database is configured). */
  get enabled(): boolean {
    return this.d.log !== undefined;
  }

  /**
   * The actor of an admin call: with `IDENTITY_MODE` `easyauth` or `development` and a valid `x-ms-client-principal`,
   * that principal's name; otherwise {@link ADMIN_KEY_ACTOR} (the admin routes are authenticated by the admin key).
   */
  actorOf(headers: Lookup): string {
    if (this.d.identity.mode === 'disabled') return ADMIN_KEY_ACTOR;
    const header = headers.get(PRINCIPAL_HEADER);
    if (header === null || header === '') return ADMIN_KEY_ACTOR;
    try {
      return decodePrincipal(header, this.d.identity.mode === 'development').name;
    } catch {
      return ADMIN_KEY_ACTOR;
    }
  }

  /**
   * `GET /api/audit`: a lead reads one page, newest first.
   * @throws AppError `forbidden`/`unauthenticated` (not a lead), `validation_failed` (naming every bad parameter),
   *   `not_found` without a case database, `dependency_unavailable`.
   */
  async list(headers: Lookup, query: Lookup): Promise<{ events: AuditEvent[]; cursor?: string }> {
    this.d.identity.require(headers, ['lead']);
    const q = parseAuditQuery(query);
    if (this.d.log === undefined)
      throw new AppError('not_found', 'The audit trail needs a case database (CASE_STORE=none).');
    return this.d.log.list(q);
  }

  /** `inner` whose promote, rollback and traffic record their pointer before and after; status passes through. */
  admin(kind: 'model' | 'ruleset' | 'signals', inner: ArtifactAdmin, actor: string): ArtifactAdmin {
    const change = async (action: string, name: string, run: () => Promise<unknown>): Promise<unknown> => {
      if (!this.enabled) return run();
      const oldValue = pointerOf(await inner.status(name));
      const result = await run();
      await this.record({ actor, kind, name, action, oldValue, newValue: pointerOf(result) });
      return result;
    };
    return {
      status: (name) => inner.status(name),
      promote: (name, body) => change('promote', name, () => inner.promote(name, body)),
      rollback: (name) => change('rollback', name, () => inner.rollback(name)),
      traffic: (name, body) => change('traffic', name, () => inner.traffic(name, body)),
    };
  }

  /**
   * `inner` (an admin behind four-eyes) whose requests kept for a second lead are recorded (`request-promote`,
   * `request-traffic`; the new value is the request kept): a lead's first step is in the trail before any change is.
   */
  requests(kind: 'model' | 'ruleset' | 'signals', inner: ArtifactAdmin, actor: () => string): ArtifactAdmin {
    const asked = async (action: string, name: string, result: unknown): Promise<unknown> => {
      if (this.enabled && result instanceof AwaitingApproval) {
        const body = result.body as { pending?: unknown };
        await this.record({ actor: actor(), kind, name, action, oldValue: null, newValue: body.pending ?? null });
      }
      return result;
    };
    return {
      status: (name) => inner.status(name),
      rollback: (name) => inner.rollback(name),
      promote: async (name, body) => asked('request-promote', name, await inner.promote(name, body)),
      traffic: async (name, body) => asked('request-traffic', name, await inner.traffic(name, body)),
    };
  }

  /**
   * `inner` whose add (the values and ttl as the new value) and remove (the value as the old one) are recorded;
   * with a `reason` (the console's people routes), the new value holds it.
   */
  lists(inner: ListsAdmin, actor: string, reason?: string): ListsAdmin {
    const why = reason === undefined ? {} : { reason };
    return {
      listPage: (name, cursor) => inner.listPage(name, cursor),
      addToList: async (name, body) => {
        const result = await inner.addToList(name, body);
        const newValue = { ...added(body), ...why };
        await this.record({ actor, kind: 'list', name, action: 'add', oldValue: null, newValue });
        return result;
      },
      removeFromList: async (name, value) => {
        const result = await inner.removeFromList(name, value);
        const newValue = reason === undefined ? null : why;
        await this.record({ actor, kind: 'list', name, action: 'remove', oldValue: { value }, newValue });
        return result;
      },
    };
  }

  /**
   * `POST /api/cases/{id}/verdict` through `cases`, recorded as kind `case`, name the case id, action `verdict`: old
   * `{ state, assignee }`, new `{ state: 'closed', verdict, reason, list }` (no payment data). The entry is written in
   * the verdict's own transaction: a verdict whose entry cannot be written is not given (503, the case stays as it
   * was), and one that fails writes no entry. A repeated verdict (the same one again) writes nothing.
   */
  async verdict(
    cases: VerdictSource,
    headers: Lookup,
    rawId: string | undefined,
    body: unknown,
  ): Promise<{ case: Case; label: unknown }> {
    const log = this.d.log;
    const v = await cases.verdictChange(
      headers,
      rawId,
      body,
      log === undefined ? undefined : (tx, change) => this.recordVerdict(log, tx, change),
    );
    return { case: v.case, label: v.label };
  }

  /** Appends a verdict's entry in its transaction. @throws AppError `dependency_unavailable` (logged, naming it). */
  private async recordVerdict(log: AuditLog, tx: Pick<SqlClient, 'query'>, v: VerdictChange): Promise<void> {
    const entry: AuditEntry = {
      actor: v.actor,
      kind: 'case',
      name: v.case.id,
      action: 'verdict',
      oldValue: { state: v.prior.state, assignee: v.prior.assignee ?? null },
      newValue: { state: 'closed', verdict: v.verdict, reason: v.reason ?? null, list: v.list ?? null },
    };
    try {
      await log.recordIn(tx, entry);
    } catch (err) {
      this.d.logger.error(
        'audit: a verdict was refused because its audit entry could not be recorded',
        failure(entry, err),
      );
      throw new AppError(
        'dependency_unavailable',
        `The verdict was not given: its audit entry (case ${entry.name}) could not be recorded; retry the call.`,
        { cause: err, transient: true, retryAfterSec: 5 },
      );
    }
  }

  /**
   * `POST /api/cases/{id}/assign` through `cases`, recorded as kind `case`, name the case id, action `assign`: old
   * `{ state, assignee }` (read with the row locked, in the reassignment's transaction), new
   * `{ state: 'assigned', assignee }`. Like the admin changes, the entry is appended after the change: one that
   * cannot be appended answers 503 (the case is reassigned; the log names the entry).
   */
  async assign(cases: AssignSource, headers: Lookup, rawId: string | undefined, body: unknown): Promise<Case> {
    const c = await cases.assignChange(headers, rawId, body);
    await this.record({
      actor: c.actor,
      kind: 'case',
      name: c.case.id,
      action: 'assign',
      oldValue: { state: c.prior.state, assignee: c.prior.assignee ?? null },
      newValue: { state: 'assigned', assignee: c.case.assignee ?? null },
    });
    return c.case;
  }

  /** A blob upload's outcome (published, unchanged or rejected), actor {@link BLOB_UPLOAD_ACTOR}, action `upload`. */
  async upload(kind: 'model' | 'ruleset' | 'signals', o: UploadOutcome<object>): Promise<void> {
    let name: string;
    let newValue: unknown;
    if (o.kind === 'rejected') {
      const r = o.rejection;
      name = r.name;
      newValue = { outcome: 'rejected', version: r.version, check: r.check, code: r.code, reason: r.reason };
    } else if (o.kind === 'published') {
      name = o.name;
      newValue = { outcome: 'published', version: o.version, mode: o.mode, generation: o.generation };
    } else {
      name = o.name;
      newValue = { outcome: 'unchanged', version: o.version };
    }
    await this.record({ actor: BLOB_UPLOAD_ACTOR, kind, name, action: 'upload', oldValue: null, newValue });
  }

  /** Appends `entry`; nothing without a trail. @throws AppError `dependency_unavailable` (logged, naming the entry). */
  async record(entry: AuditEntry): Promise<void> {
    const log = this.d.log;
    if (log === undefined) return;
    try {
      await log.record(entry);
    } catch (err) {
      this.d.logger.error('audit: a change was made but its audit entry could not be recorded', failure(entry, err));
      throw new AppError(
        'dependency_unavailable',
        `The change was made but its audit entry (${entry.kind} ${entry.name} ${entry.action}) could not be recorded.`,
        { cause: err },
      );
    }
  }
}
