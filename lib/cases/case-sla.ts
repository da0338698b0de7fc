/**
 * A case's age and SLA as the case API answers them: `ageSeconds` (from its decision to now, or to its close) and
 * `slaBreached` (its queue's deadline, `slaDueAt`, passed before it closed, or before now while it is open).
 * @module
 */
import type { Case } from './case-store';

/** A case with its age and whether its SLA is breached, at the time of the answer. */
export type CaseView = Case & {
  /** Seconds from the decision to now (to the close, for a closed case), whole. */
  readonly ageSeconds: number;
  /** Whether the SLA deadline passed before the close (or before now, while open); false without a deadline. */
  readonly slaBreached: boolean;
};

/** `c` with its age and SLA state at `now` (ms since the epoch). */
export function withSla(c: Case, now: number): CaseView {
  const closed = c.closedAt === undefined ? undefined : Date.parse(c.closedAt);
  const end = closed !== undefined && Number.isFinite(closed) ? closed : now;
  const decided = Date.parse(c.decidedAt);
  const due = c.slaDueAt === undefined ? undefined : Date.parse(c.slaDueAt);
  return {
    ...c,
    ageSeconds: Number.isFinite(decided) ? Math.max(0, Math.floor((end - decided) / 1000)) : 0,
    slaBreached: due !== undefined && Number.isFinite(due) && end > due,
  };
}
