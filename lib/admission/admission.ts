/**
 * The engine's admission: what decides, as an invocation reaches the app, whether it is served. It runs
 * inside the function app, so it runs in Azure as it runs under `npm start`.
 *
 * - **HTTP requests: by deadline** ({@link DeadlineAdmission}). A request is refused only when the work
 *   ahead of it, at the measured rate, takes longer than what is left of its own deadline; the refusal is a
 *   503 `overloaded` whose `Retry-After` is the backlog's drain time. Only valid work is judged: the
 *   engine reads and validates a body first (a bad one is answered 400, even under load), then admits.
 *   The deadline starts when the invocation reaches the app ({@link Admission.clock} read then), so the
 *   time spent reading the body counts against it. A request served after its deadline is counted (a
 *   late answer).
 * - **Service Bus deliveries wait** for a slot in the ceiling (up to `ADMISSION_QUEUE_WAIT_MS`) rather than
 *   being refused (a refused delivery counts toward the dead-letter limit); once in, they are work ahead of
 *   later requests.
 * - **A ceiling that protects memory** ({@link AdmissionGate}, `ADMISSION_MAX_INFLIGHT`): no more than this
 *   many requests and deliveries inside at once, whatever their deadlines. It starts at its maximum and only
 *   an admitted request's `dropped` outcome lowers it; this module reports none, so it stays there.
 * @module
 */
import { AppError } from '../errors/errors';
import type { AdmissionGate, AdmissionStats, AdmissionTicket } from './admission-gate';
import type { DeadlineAdmission, DeadlineAdmissionStats, DeadlineTicket } from './deadline-admission';

/** What {@link Admission.stats} reports. */
export interface EngineAdmissionStats {
  readonly deadline: DeadlineAdmissionStats;
  /** The memory ceiling (`undefined` without one). */
  readonly ceiling: AdmissionStats | undefined;
}

/** Where an admitted request's deadline starts and ends, ms on the admission's clock. */
export interface Arrival {
  readonly at: number;
  readonly deadlineAt: number;
}

/** Admission by deadline, with a ceiling (see the module comment). */
export class Admission {
  constructor(
    private readonly deadlines: DeadlineAdmission,
    private readonly ceiling: AdmissionGate | undefined,
    private readonly queueWaitMs: number,
  ) {}

  get stats(): EngineAdmissionStats {
    return { deadline: this.deadlines.stats, ceiling: this.ceiling?.stats };
  }

  /** The admission's clock, ms: read it as an invocation reaches the app and pass it to {@link run}. */
  clock(): number {
    return this.deadlines.clock();
  }

  /**
   * Runs `fn` as one request with a deadline of `deadlineMs` from `arrivedAt` (its arrival at the app, on
   * {@link clock}; default now).
   * @throws AppError `overloaded` (503, `Retry-After` from the backlog) when it cannot finish within its
   *   deadline or the ceiling is full; `fn` then never runs. Else whatever `fn` throws.
   */
  async run<T>(deadlineMs: number, fn: (arrival: Arrival) => Promise<T>, arrivedAt?: number): Promise<T> {
    const decision = this.deadlines.tryAdmit(deadlineMs, arrivedAt);
    if (!decision.admitted)
      throw overloaded('The request cannot be served within its deadline', decision.refusal.retryAfterSec);
    const ticket = decision.ticket;
    const slot = this.ceiling?.tryAdmit();
    if (this.ceiling !== undefined && slot === undefined) {
      ticket.release(false);
      throw overloaded('The instance is at capacity (ADMISSION_MAX_INFLIGHT)', this.deadlines.retryAfterSec());
    }
    return served(ticket, slot, () => fn(ticket));
  }

  /**
   * Runs `fn` as work without a deadline that can wait (a Service Bus delivery of `weight` messages): it
   * waits up to `ADMISSION_QUEUE_WAIT_MS` for a slot in the ceiling, then counts as work ahead of later requests.
   * @throws AppError `overloaded` (transient) when no slot frees in time; `fn` then never runs.
   */
  async runWaiting<T>(weight: number, fn: () => Promise<T>): Promise<T> {
    const slot = this.ceiling === undefined ? undefined : await this.ceiling.admitWithin(this.queueWaitMs);
    if (this.ceiling !== undefined && slot === undefined)
      throw overloaded('The instance is at capacity (ADMISSION_MAX_INFLIGHT)', this.deadlines.retryAfterSec());
    return served(this.deadlines.enterWithoutDeadline(weight), slot, fn);
  }
}

async function served<T>(ticket: DeadlineTicket, slot: AdmissionTicket | undefined, fn: () => Promise<T>): Promise<T> {
  try {
    const result = await fn();
    ticket.release(true);
    return result;
  } catch (err) {
    ticket.release(false);
    throw err;
  } finally {
    slot?.release('ok');
  }
}

function overloaded(why: string, retryAfterSec: number): AppError {
  return new AppError('overloaded', `${why}; retry after Retry-After seconds.`, { retryAfterSec });
}
