/**
 * The consumer of the intake queue (`CASE_INTAKE_QUEUE`, the `caseIntake` function): writes one delivery batch of
 * cases to the store, idempotently (`ON CONFLICT (transaction_id) DO NOTHING`: a redelivered case opens nothing).
 *
 * - The database unavailable (a connection error, or the store not open yet): waits `retryBaseMs` doubling with the
 *   delivery count (at most `retryMaxMs`) inside the invocation, then throws, so the queue redelivers the batch; its
 *   `maxDeliveryCount` covers the long tail (docs/cases.md: how long an outage that rides out).
 * - Any other failure of the batch insert: the rows are written one by one. A row refused for its data (SQLSTATE
 *   class 22 or 23, or a body that is not a case) is rejected with its reason (the function sends it to the rejected
 *   queue); the others are written. A row failing otherwise fails the batch as above.
 */
import { z } from 'zod';
import { AppError } from '../errors/errors';
import type { Timers } from '../platform/timers';
import { caseSignalsSchema } from './case-signals';
import type { CaseStore, NewCase } from './case-store';

/** One message of a delivery batch. */
export interface IntakeMessage {
  readonly body: unknown;
  readonly messageId?: string;
  readonly deliveryCount?: number;
}

/** A message that can never become a case, with its reason and the original body (as the scoring queue's). */
export interface RejectedCase {
  readonly reason: 'invalid_case' | 'case_unwritable';
  /** What was wrong: the fields, or the database's SQLSTATE (never a value). */
  readonly detail: string;
  readonly originalBody: string;
  readonly messageId?: string;
  readonly deliveryCount?: number;
  readonly rejectedAt: string;
}

/** What the intake reports (telemetry counts them). Never carries payment data. */
export interface CaseIntakeEvents {
  /** A batch was written: `opened` new cases of `count` (the rest already had one). */
  written(e: { readonly count: number; readonly opened: number; readonly ms: number }): void;
  /** `count` messages were rejected. */
  rejected(e: { readonly count: number; readonly reason: RejectedCase['reason'] }): void;
  /** The database was unavailable: the batch is given back after `waitMs` (delivery `deliveryCount`). */
  retrying(e: {
    readonly count: number;
    readonly deliveryCount: number;
    readonly waitMs: number;
    readonly error: string;
  }): void;
}

/** Options of a {@link CaseIntake}. */
export interface CaseIntakeOptions {
  readonly store: CaseStore;
  readonly timers: Timers;
  /** Wall clock, ms (opening and rejection times). */
  readonly wallClock: () => number;
  /** Monotonic clock, ms. Default `performance.now`. */
  readonly now?: () => number;
  /** Wait before giving back a batch on its first delivery, ms; doubled per delivery. Default 1 000. */
  readonly retryBaseMs?: number;
  /** Longest wait before giving a batch back, ms (well under the message lock and `functionTimeout`). Default 20 000. */
  readonly retryMaxMs?: number;
  readonly on?: Partial<CaseIntakeEvents>;
}

const caseSchema = z.looseObject({
  transactionId: z.string().min(1),
  payment: z.looseObject({ userId: z.string(), merchantId: z.string() }),
  score: z.number().nullable(),
  decision: z.string(),
  reasons: z.array(z.unknown()),
  rules: z.array(z.looseObject({ id: z.string(), action: z.string() })),
  ruleErrors: z.array(z.string()),
  model: z.looseObject({ name: z.string(), version: z.string() }),
  decidedAt: z.number().finite(),
  signals: caseSignalsSchema.optional(),
});

/** SQLSTATE classes of a row's own data: 22 data exception, 23 integrity constraint violation. */
const DATA_CLASSES = new Set(['22', '23']);

/** The SQLSTATE (or errno code) in an error's cause chain, if any. */
export function errorCode(err: unknown): string | undefined {
  for (let e: unknown = err, depth = 0; e !== null && typeof e === 'object' && depth < 8; depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && !(e instanceof AppError)) return code;
    e = (e as { cause?: unknown }).cause;
  }
  return undefined;
}

/** Whether a failure is the row's own data (SQLSTATE class 22/23, or a record the store cannot build). */
export function isDataError(err: unknown): boolean {
  const code = errorCode(err);
  if (code !== undefined && /^[0-9A-Z]{5}$/.test(code)) return DATA_CLASSES.has(code.slice(0, 2));
  for (let e: unknown = err, depth = 0; e instanceof Error && depth < 8; depth++, e = e.cause)
    if (e instanceof TypeError || e instanceof RangeError) return true;
  return false;
}

/** Whether a failure means the database is unreachable (connection, server shutting down, no store yet). */
export function isConnectionError(err: unknown): boolean {
  const code = errorCode(err);
  if (code === undefined) return !isDataError(err); // no code: a dropped connection, a pool timeout, no store yet
  if (/^[0-9A-Z]{5}$/.test(code)) return ['08', '53', '57'].includes(code.slice(0, 2));
  return true; // an errno code: ECONNREFUSED, ECONNRESET, ETIMEDOUT…
}

/** Writes delivery batches of the intake queue to the case store (see the module comment). */
export class CaseIntake {
  private readonly now: () => number;

  constructor(private readonly o: CaseIntakeOptions) {
    this.now = o.now ?? (() => performance.now());
  }

  /**
   * Writes a delivery batch; returns the messages rejected for good (the caller sends them to the rejected queue).
   * @throws AppError `dependency_unavailable` (after the backoff wait) when the database is unavailable: the
   *   caller throws it so the queue redelivers the batch.
   */
  async write(
    messages: readonly IntakeMessage[],
  ): Promise<{ readonly opened: number; readonly rejected: RejectedCase[] }> {
    const rejected: RejectedCase[] = [];
    const cases: { readonly c: NewCase; readonly m: IntakeMessage }[] = [];
    for (const m of messages) {
      const parsed = parseCase(m.body);
      if (typeof parsed === 'string') rejected.push(this.rejection(m, 'invalid_case', parsed));
      else cases.push({ c: parsed, m });
    }
    const t0 = this.now();
    let opened = 0;
    if (cases.length > 0) {
      try {
        opened = await this.o.store.open(
          cases.map((x) => x.c),
          this.o.wallClock(),
        );
      } catch (err) {
        if (isConnectionError(err)) await this.giveBack(messages, err);
        for (const { c, m } of cases) {
          try {
            opened += await this.o.store.open([c], this.o.wallClock());
          } catch (rowErr) {
            if (!isDataError(rowErr)) await this.giveBack(messages, rowErr);
            rejected.push(this.rejection(m, 'case_unwritable', `SQLSTATE ${errorCode(rowErr) ?? 'none'}`));
          }
        }
      }
      this.emit('written', { count: cases.length, opened, ms: this.now() - t0 });
    }
    for (const reason of ['invalid_case', 'case_unwritable'] as const) {
      const count = rejected.filter((r) => r.reason === reason).length;
      if (count > 0) this.emit('rejected', { count, reason });
    }
    return { opened, rejected };
  }

  /** Waits by the batch's delivery count, then throws: the queue delivers the batch again. */
  private async giveBack(messages: readonly IntakeMessage[], err: unknown): Promise<never> {
    const deliveryCount = Math.max(1, ...messages.map((m) => m.deliveryCount ?? 1));
    const waitMs = Math.min(
      (this.o.retryBaseMs ?? 1_000) * 2 ** Math.min(deliveryCount - 1, 20),
      this.o.retryMaxMs ?? 20_000,
    );
    const error = errorCode(err) ?? (err instanceof Error ? err.name : 'error');
    this.emit('retrying', { count: messages.length, deliveryCount, waitMs, error });
    await new Promise<void>((resolve) => this.o.timers.setTimeout(resolve, waitMs));
    throw new AppError(
      'dependency_unavailable',
      `The case store is unavailable (${error}); the batch is redelivered.`,
      {
        cause: err,
        transient: true,
      },
    );
  }

  private rejection(m: IntakeMessage, reason: RejectedCase['reason'], detail: string): RejectedCase {
    return {
      reason,
      detail,
      originalBody: typeof m.body === 'string' ? m.body : (JSON.stringify(m.body) ?? ''),
      ...(m.messageId === undefined ? {} : { messageId: m.messageId }),
      ...(m.deliveryCount === undefined ? {} : { deliveryCount: m.deliveryCount }),
      rejectedAt: new Date(this.o.wallClock()).toISOString(),
    };
  }

  private emit<K extends keyof CaseIntakeEvents>(k: K, e: Parameters<CaseIntakeEvents[K]>[0]): void {
    try {
      (this.o.on?.[k] as ((e: Parameters<CaseIntakeEvents[K]>[0]) => void) | undefined)?.(e);
    } catch {
      // a handler's failure must not fail the batch
    }
  }
}

/** The case a message carries, or what is wrong with it (field paths only). */
function parseCase(body: unknown): NewCase | string {
  let value = body;
  if (typeof body === 'string' || Buffer.isBuffer(body)) {
    try {
      value = JSON.parse(body.toString()) as unknown;
    } catch {
      return 'not JSON';
    }
  }
  const r = caseSchema.safeParse(value);
  if (r.success) return r.data as unknown as NewCase;
  return `invalid fields: ${[...new Set(r.error.issues.map((i) => i.path.join('.') || '(body)'))].join(', ')}`;
}
