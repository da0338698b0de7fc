/**
 * An adaptive concurrency gate. The engine uses it as its memory ceiling (`./admission.ts`,
 * `ADMISSION_MAX_INFLIGHT`): nothing reports drops to it there, so its limit stays at its maximum, and
 * Service Bus deliveries wait in it for a slot (`admitWithin`); the engine asks it after a request's body
 * was validated. What follows is the gate's general behaviour: it decides whether the engine takes a
 * request. It keeps the requests inside the engine (admitted, not yet answered) under an adaptive limit,
 * and answers the excess at once with `overloaded` (503 + `Retry-After`), before the expensive work
 * (context lookup, rules, inference).
 *
 * The limit is an AIMD concurrency limit (Netflix `concurrency-limits` `AIMDLimit`; the headroom
 * term of Envoy's adaptive concurrency filter), driven by what admitted requests run into:
 *
 * - **Drops.** A request admitted here but then refused by inference (the micro-batcher predicts it
 *   cannot meet its deadline, or its queue is full) is a drop: the door let in more than inference
 *   can serve in time. As soon as at least 3 drops, and at least `dropRatio` (5 %) of the requests
 *   answered since the interval began, were drops, the limit becomes `backoff` × min(limit, requests
 *   inside), never below `minLimit`; then not again for `intervalMs` (CoDel's interval: one burst of
 *   drops counts once). A stray drop (a noisy estimate, a GC pause) lowers nothing.
 * - **Increase.** An interval (`intervalMs`) without congestion in which the limit was reached (a
 *   refusal here, or as many inside as the limit) raises it: by √limit (Envoy's headroom) while below
 *   the level of the last decrease, then by 1 (TCP Reno: slow start, then congestion avoidance), up
 *   to `maxLimit`.
 * - **When unsure, admit.** The limit starts at `maxLimit`: a fresh instance takes a burst whole.
 *
 * Event-loop delay alone lowers nothing: a request admitted late because the loop was busy still
 * runs, and under a closed loop, refusing more does not shorten the loop's queue (every refused
 * client sends again at once), it only turns goodput into 503s. See README "Admission".
 *
 * Pure logic: the clock is injected. Property-tested in `test/admission/admission-gate.property.test.ts`.
 */
import { AppError } from '../errors/errors';
import { refTimers, type Timers } from '../platform/timers';

/** Settings of an {@link AdmissionGate} (from `ADMISSION_*`, see `lib/config/config.ts`). */
export interface AdmissionOptions {
  /** Most requests inside the engine at once, and the starting limit (`ADMISSION_MAX_INFLIGHT`, default 1024). */
  readonly maxLimit: number;
  /** The adaptive limit never goes below this (`ADMISSION_MIN_INFLIGHT`, default 16). */
  readonly minLimit: number;
  /** Starting limit; default `maxLimit`. */
  readonly initialLimit?: number;
  /** Interval between limit changes, ms (`ADMISSION_INTERVAL_MS`, default 100). */
  readonly intervalMs: number;
  /** Multiplicative decrease after an interval with drops, in (0, 1); default 0.9. */
  readonly backoff?: number;
  /** Share of an interval's answered requests that must be drops to lower the limit, in (0, 1]; default 0.05. */
  readonly dropRatio?: number;
  /** `Retry-After` of a refusal, s; default 1. */
  readonly retryAfterSec?: number;
}

/** How an admitted request ended: `ok` (answered, whatever the answer), or `dropped` (refused by inference as overloaded). */
export type AdmissionOutcome = 'ok' | 'dropped';

/** One admitted request. `release()` when it is answered (only the first call counts). */
export interface AdmissionTicket {
  /** When the request was admitted: its arrival at the engine, on the gate's clock (ms). */
  readonly at: number;
  release(outcome?: AdmissionOutcome): void;
}

/** What an {@link AdmissionGate} reports. */
export interface AdmissionStats {
  readonly limit: number;
  readonly inflight: number;
  readonly admitted: number;
  readonly refused: number;
  readonly dropped: number;
  /** Callers of `admitWithin` waiting for a slot now. */
  readonly waiting: number;
}

/** Events for telemetry. */
export interface AdmissionEvents {
  /** A request was refused at the door. */
  refused(e: { inflight: number; limit: number }): void;
  /** The limit changed at the end of an interval. `drops`: admitted requests refused by inference in it. */
  limitChanged(e: { from: number; to: number; drops: number }): void;
}

/** The adaptive admission gate (see the module comment). */
export class AdmissionGate {
  private limitValue: number;
  private inflightCount = 0;
  private counts = { admitted: 0, refused: 0, dropped: 0 };
  private windowStart: number;
  private windowDrops = 0;
  private windowAnswered = 0;
  private windowSaturated = false;
  /** The level at the last decrease: growth is fast below it, +1 per interval above (Reno's ssthresh). */
  private threshold = Number.POSITIVE_INFINITY;
  private lastDecrease = Number.NEGATIVE_INFINITY;
  private readonly backoff: number;
  /** Callers of {@link admitWithin} waiting for a slot, oldest first. */
  private readonly waiters: ((ticket: AdmissionTicket) => void)[] = [];

  constructor(
    private readonly options: AdmissionOptions,
    private readonly now: () => number = () => performance.now(),
    private readonly on: Partial<AdmissionEvents> = {},
  ) {
    const max = Math.max(1, Math.floor(options.maxLimit));
    const min = Math.min(max, Math.max(1, Math.floor(options.minLimit)));
    this.options = { ...options, maxLimit: max, minLimit: min };
    this.limitValue = clamp(options.initialLimit ?? max, min, max);
    this.backoff = options.backoff ?? 0.9;
    this.windowStart = now();
  }

  /** Running totals and the current limit. */
  get stats(): AdmissionStats {
    return { limit: this.limit, inflight: this.inflightCount, ...this.counts, waiting: this.waiters.length };
  }

  /** The current limit (requests inside the engine at once). */
  get limit(): number {
    return Math.floor(this.limitValue);
  }

  /**
   * With nothing inside, starts over as a fresh gate does: the limit back at its maximum, the level of the
   * last decrease forgotten (counters are kept). A drained host has no queue, so what lowered the limit no
   * longer holds; when unsure, admit. Does nothing while a request is inside. @returns whether it restarted.
   */
  restartIfDrained(): boolean {
    if (this.inflightCount !== 0 || this.limitValue === this.options.maxLimit) return false;
    const from = this.limit;
    this.limitValue = this.options.maxLimit;
    this.threshold = Number.POSITIVE_INFINITY;
    this.on.limitChanged?.({ from, to: this.limit, drops: 0 });
    return true;
  }

  /** Admits a request, or returns `undefined` when the engine is full. Never waits. */
  tryAdmit(): AdmissionTicket | undefined {
    const now = this.now();
    this.roll(now);
    if (this.inflightCount >= this.limit) {
      this.counts.refused++;
      this.windowSaturated = true;
      this.on.refused?.({ inflight: this.inflightCount, limit: this.limit });
      return undefined;
    }
    this.inflightCount++;
    this.counts.admitted++;
    if (this.inflightCount >= this.limit) this.windowSaturated = true;
    return this.ticket(now);
  }

  /**
   * Admits a request, waiting up to `maxWaitMs` for a slot when the engine is full, for callers that can
   * wait (a Service Bus delivery: refusing it would send it back to the queue and count a delivery).
   * Waiters get freed slots first, oldest first, ahead of new arrivals; resolves to `undefined` (counted as
   * refused) if none frees in time.
   */
  admitWithin(maxWaitMs: number, timers: Timers = refTimers): Promise<AdmissionTicket | undefined> {
    const ticket = this.tryAdmit();
    if (ticket !== undefined || maxWaitMs <= 0) return Promise.resolve(ticket);
    this.counts.refused--; // not refused yet: it waits
    return new Promise((resolve) => {
      const waiter = (t: AdmissionTicket): void => {
        timers.clearTimeout(timer);
        resolve(t);
      };
      const timer = timers.setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i >= 0) this.waiters.splice(i, 1);
        this.counts.refused++;
        resolve(undefined);
      }, maxWaitMs);
      this.waiters.push(waiter);
    });
  }

  /** A ticket for a slot already counted in `inflightCount`. */
  private ticket(at: number): AdmissionTicket {
    let released = false;
    return {
      at,
      release: (outcome = 'ok') => {
        if (released) return;
        released = true;
        this.inflightCount--;
        this.windowAnswered++;
        if (outcome === 'dropped') {
          this.counts.dropped++;
          this.windowDrops++;
        }
        const now = this.now();
        this.roll(now);
        const next = this.inflightCount < this.limit ? this.waiters.shift() : undefined;
        if (next !== undefined) {
          // the freed slot goes to the oldest waiter at once, before any new arrival can take it
          this.inflightCount++;
          this.counts.admitted++;
          if (this.inflightCount >= this.limit) this.windowSaturated = true;
          next(this.ticket(now));
        }
      },
    };
  }

  /**
   * Admits a request or refuses it with `overloaded` (503, `Retry-After`).
   * @throws AppError `overloaded` when the engine is full.
   */
  admit(): AdmissionTicket {
    return this.tryAdmit() ?? this.refuse();
  }

  /**
   * Runs `fn` holding a ticket, released when `fn` settles: as `dropped` if `fn` throws an error that
   * `isDrop` recognises, else `ok`.
   * @throws AppError `overloaded` before `fn` starts when the engine is full; else whatever `fn` throws.
   */
  async run<T>(
    fn: (ticket: AdmissionTicket) => Promise<T>,
    isDrop: (err: unknown) => boolean = () => false,
  ): Promise<T> {
    return holding(this.admit(), fn, isDrop);
  }

  /**
   * {@link run}, waiting up to `maxWaitMs` for a slot as {@link admitWithin} does.
   * @throws AppError `overloaded` before `fn` starts when no slot frees in time; else whatever `fn` throws.
   */
  async runWithin<T>(
    maxWaitMs: number,
    fn: (ticket: AdmissionTicket) => Promise<T>,
    isDrop: (err: unknown) => boolean = () => false,
    timers?: Timers,
  ): Promise<T> {
    return holding((await this.admitWithin(maxWaitMs, timers)) ?? this.refuse(), fn, isDrop);
  }

  private refuse(): never {
    throw new AppError('overloaded', 'The service is at capacity; retry shortly.', {
      retryAfterSec: this.options.retryAfterSec ?? 1,
    });
  }

  /**
   * Adjusts the limit. Congestion (drops ≥ max(`MIN_DROPS`, `dropRatio` × answers) since the interval
   * began) lowers it at once, at most once per interval; an interval that ends uncongested and
   * saturated raises it: by √limit up to the level of the last decrease, then by 1 (TCP Reno's slow
   * start and congestion avoidance).
   */
  private roll(now: number): void {
    const { minLimit, maxLimit, intervalMs } = this.options;
    const from = this.limit;
    const drops = this.windowDrops;
    const congested = drops >= Math.max(MIN_DROPS, (this.options.dropRatio ?? 0.05) * this.windowAnswered);
    const elapsed = now - this.windowStart;
    if (congested && now - this.lastDecrease >= intervalMs) {
      const level = Math.min(this.limitValue, Math.max(1, this.inflightCount));
      this.threshold = level;
      this.limitValue = clamp(level * this.backoff, minLimit, maxLimit);
      this.lastDecrease = now;
    } else if (elapsed < intervalMs) {
      return;
    } else if (!congested && this.windowSaturated) {
      const step = this.limitValue + Math.sqrt(this.limitValue) <= this.threshold ? Math.sqrt(this.limitValue) : 1;
      this.limitValue = clamp(this.limitValue + Math.max(1, step), minLimit, maxLimit);
    } else if (congested) {
      return; // congested, but lowered less than an interval ago: keep counting
    }
    this.windowStart = now;
    this.windowDrops = 0;
    this.windowAnswered = 0;
    this.windowSaturated = this.inflightCount >= this.limit;
    if (this.limit !== from) this.on.limitChanged?.({ from, to: this.limit, drops });
  }
}

/** Runs `fn` holding `ticket`, released when `fn` settles: `dropped` if `isDrop` recognises its error, else `ok`. */
async function holding<T>(
  ticket: AdmissionTicket,
  fn: (ticket: AdmissionTicket) => Promise<T>,
  isDrop: (err: unknown) => boolean,
): Promise<T> {
  try {
    const result = await fn(ticket);
    ticket.release('ok');
    return result;
  } catch (err) {
    ticket.release(isDrop(err) ? 'dropped' : 'ok');
    throw err;
  }
}

/** Fewest drops that count as congestion (fewer are noise: a misestimate, a GC pause). */
const MIN_DROPS = 3;

function clamp(v: number, lo: number, hi: number): number {
  return Math.min(hi, Math.max(lo, v));
}
