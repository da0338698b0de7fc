/**
 * The relay of the verdicts' outbox as the engine runs it: labels go to the labels path (`POST /api/labels`'s
 * validation and store: one label per transaction and label, so a redelivery stores nothing new), list additions to
 * the lists path (setting an entry again changes nothing but its time to live). Failures are logged at most every
 * 10 s with their count; the rows stay in the outbox and are retried.
 * @module
 */
import { AppError } from '../errors/errors';
import type { Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import type { OutboxMessage } from './case-outbox';
import type { CaseLists } from './case-service';
import { OutboxRelay, type OutboxRelayEvents } from './outbox-relay';
import type { SqlClient } from '../platform/sql/sql-client';

/** Dependencies of {@link verdictRelay}. */
export interface VerdictRelayDeps {
  /** The case database (throws while the store is not open). */
  readonly sql: () => Pick<SqlClient, 'query'>;
  /** The labels path (`Learning.addLabels`). */
  readonly addLabels: (body: unknown) => Promise<unknown>;
  /** The lists path; absent without a ruleset (a list addition then waits in the outbox). */
  readonly lists?: CaseLists;
  readonly timers: Timers;
  /** Wall clock, ms. */
  readonly wallClock: () => number;
  readonly logger: Logger;
  /** Further subscribers of the relay's events (telemetry, tests). */
  readonly on?: Partial<OutboxRelayEvents>;
}

/** Hands one outbox message to its path. */
export function deliverVerdictMessage(
  m: OutboxMessage,
  addLabels: VerdictRelayDeps['addLabels'],
  lists: CaseLists | undefined,
): Promise<unknown> {
  if (m.kind === 'label') return addLabels({ labels: [m.payload] });
  if (lists === undefined)
    return Promise.reject(new AppError('not_found', 'No ruleset is configured: the list addition waits.'));
  const { list, values, ttlSeconds } = m.payload;
  return lists.addToList(list, { values: [...values], ...(ttlSeconds === undefined ? {} : { ttlSeconds }) });
}

/** The relay of the verdicts' outbox (not started). */
export function verdictRelay(d: VerdictRelayDeps): OutboxRelay {
  const limited = (msg: string): ((fields: Record<string, unknown>) => void) => {
    let last = Number.NEGATIVE_INFINITY;
    let since = 0;
    return (fields) => {
      since++;
      const t = d.wallClock();
      if (t - last < 10_000) return;
      d.logger.warn(msg, { ...fields, count: since });
      since = 0;
      last = t;
    };
  };
  const failed = limited(
    'cases: a verdict could not be delivered to its store yet; it stays in the outbox and is retried',
  );
  const passFailed = limited('cases: the verdict outbox could not be read; the relay retries');
  return new OutboxRelay({
    sql: d.sql,
    deliver: async (m) => void (await deliverVerdictMessage(m, d.addLabels, d.lists)),
    timers: d.timers,
    wallClock: d.wallClock,
    on: {
      delivered: (e) => d.on?.delivered?.(e),
      failed: (e) => {
        d.on?.failed?.(e);
        failed({ kind: e.kind, attempts: e.attempts, retryInMs: e.retryInMs, error: e.error });
      },
      passFailed: (e) => {
        d.on?.passFailed?.(e);
        passFailed({ error: e.error, retryInMs: e.retryInMs });
      },
    },
  });
}
