/**
 * The governance of changes to what decides: the audit trail (lib/governance/audit.ts). Built once by the composition
 * root (lib/app.ts) beside the case queue, whose database it shares.
 * @module
 */
import type { Cases } from '../cases/create-cases';
import type { Identity } from '../identity/identity';
import type { Logger } from '../platform/logger';
import { Audit } from './audit';
import { SqlAuditLog } from './sql-audit-log';

/** The governance of one engine. */
export class Governance {
  constructor(readonly audit: Audit) {}
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
  return new Governance(new Audit({ log, identity: deps.identity, logger: deps.logger }));
}
