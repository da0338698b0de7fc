/**
 * The governance of changes to what decides: the audit trail (lib/governance/audit.ts), and the four-eyes rule any
 * rollout kind can turn on (lib/rollout/four-eyes.ts), with the leads as the identity names them. Built once by the
 * composition root (lib/app.ts) beside the case queue, whose database it shares.
 * @module
 */
import type { Cases } from '../cases/create-cases';
import { AppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { Identity } from '../identity/identity';
import type { Logger } from '../platform/logger';
import type { FourEyes } from '../rollout/four-eyes';
import { Audit } from './audit';
import { SqlAuditLog } from './sql-audit-log';

/** Headers, as the adapters pass them. */
type Headers = { get(name: string): string | null };

/** The governance of one engine. */
export class Governance {
  constructor(
    readonly audit: Audit,
    private readonly identity?: Identity,
  ) {}

  /**
   * The admin of one kind as a request acts on it: audited (the change, by the request's actor), and, when the kind
   * has the four-eyes rule on (`fourEyes`), a promote, canary or shadow takes effect only when a second lead asks
   * for the same (the first is answered 202, and its request recorded). Without an identity a gated change is refused (`forbidden`).
   */
  admin(
    kind: 'model' | 'ruleset' | 'signals',
    inner: ArtifactAdmin,
    headers: Headers,
    fourEyes?: FourEyes,
  ): ArtifactAdmin {
    const audited = this.audit.admin(kind, inner, this.audit.actorOf(headers));
    if (fourEyes === undefined) return audited;
    const lead = (): string => this.lead(headers);
    return this.audit.requests(kind, fourEyes.admin(audited, lead), lead);
  }

  /** The lead acting. @throws AppError `forbidden`/`unauthenticated` for anyone else. */
  private lead(headers: Headers): string {
    if (this.identity === undefined || this.identity.mode === 'disabled')
      throw new AppError(
        'forbidden',
        'This change needs a second lead (four-eyes), and authentication is not configured (IDENTITY_MODE=disabled).',
      );
    return this.identity.require(headers, ['lead']).name;
  }
}

/** Dependencies of {@link createGovernance}. */
export interface GovernanceDeps {
  /** The case queue: its database holds the trail; none (`CASE_STORE=none`) means no trail. */
  readonly cases: Cases;
  readonly identity: Identity;
  readonly logger: Logger;
  /** Wall clock, epoch ms. */
  readonly wallClock: () => number;
}

/** Builds the governance: the audit trail in the case database, or none without one. */
export function createGovernance(deps: GovernanceDeps): Governance {
  const log =
    deps.cases.service === undefined
      ? undefined
      : new SqlAuditLog({ sql: () => deps.cases.sql(), wallClock: deps.wallClock });
  return new Governance(new Audit({ log, identity: deps.identity, logger: deps.logger }), deps.identity);
}
