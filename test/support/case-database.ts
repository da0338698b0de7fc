import { CASE_MIGRATIONS } from '../../lib/cases/migrations';
import { GOVERNANCE_MIGRATIONS } from '../../lib/governance/migrations';
import type { MigrationSet } from '../../lib/platform/sql/migrate';
import { WEBHOOK_MIGRATIONS } from '../../lib/webhooks/migrations';

/** The migrations of the subsystems that share the case store's database (as the composition root passes them). */
export const SHARED_WITH_CASES: readonly MigrationSet[] = [GOVERNANCE_MIGRATIONS, WEBHOOK_MIGRATIONS];

/** Every migration of the case database: the case store's, the governance's and the webhooks'. */
export const CASE_DATABASE: readonly MigrationSet[] = [CASE_MIGRATIONS, ...SHARED_WITH_CASES];
