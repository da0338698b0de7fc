/**
 * The local host's door: an adaptive concurrency limit in front of the function invocations, checked
 * right after routing and before the request body is read, converted to RPC data or handed to
 * `@azure/functions`. Past the limit the host answers at once with a precomputed 503 (`overloaded`,
 * `Retry-After`): Node's HTTP parsing and one write instead of a whole invocation.
 *
 * Why in the host: under a closed loop far above capacity (1 000 connections), every refusal inside the
 * function handler still pays the host's and the library's per-invocation work (body read, RPC
 * conversion, undici `Request` / `Response`), about a millisecond each; the refusals alone then fill the
 * event loop and starve inference of CPU. The Functions host is where Azure throttles HTTP too (host.json
 * `extensions.http.maxOutstandingRequests`, answered with 429 before the worker sees the request).
 *
 * The limit is the same AIMD {@link AdmissionGate} the engine uses (pure, property-tested), driven by what
 * the host sees: a request that the function answered with 503 (the engine refused it: its own gate,
 * or inference that could not meet the deadline) is a drop and lowers the limit; saturated intervals
 * without drops raise it. It starts at its maximum (a fresh instance takes a burst whole).
 *
 * After a refusal the host holds that keep-alive connection for `holdMs` before it reads its next request
 * (`./connection-hold`): under a closed loop, refused clients would otherwise come straight back and fill
 * the event loop with refusals.
 *
 * With `latencyTargetMs`, an answer that came later than the target also counts as a drop (the host's own
 * queue is too long), and a drained door starts over at its maximum: libuv accepts one connection per
 * loop iteration, so a saturated loop keeps new connections waiting in the accept queue for seconds.
 *
 * Only methods that carry work pass through the door (`POST`, `PUT`, `PATCH`, `DELETE`): `GET`, `HEAD`
 * and `OPTIONS` (health probes, metadata) always pass, so an overloaded instance still answers its
 * readiness probe from the state the engine holds.
 *
 * @module
 */
import { AdmissionGate, type AdmissionEvents, type AdmissionStats } from '../lib/admission/admission-gate';
import type { HoldScheduler } from './connection-hold';

/** Default hold of a refused keep-alive connection, ms (see {@link HostDoorOptions.holdMs}). */
export const DEFAULT_HOLD_MS = 500;

/** Settings of a {@link HostDoor}. */
export interface HostDoorOptions {
  /** Most guarded requests inside the host at once, and the starting limit; default 1024. */
  readonly maxLimit?: number;
  /** Floor of the adaptive limit; default 16. */
  readonly minLimit?: number;
  /** Interval between limit changes, ms; default 100. */
  readonly intervalMs?: number;
  /** `Retry-After` of a refusal, s; default 1. */
  readonly retryAfterSec?: number;
  /**
   * After a refusal, how long the host waits before it reads that keep-alive connection's next request, ms
   * (`./connection-hold`); 0 = read it at once. Default {@link DEFAULT_HOLD_MS}, never more than `Retry-After`.
   */
  readonly holdMs?: number;
  /** Timer for the holds (injected in tests); default an unref'd `setTimeout`. */
  readonly holdScheduler?: HoldScheduler;
  /**
   * A request that stayed longer than this in the host (door to answer), ms, counts as a drop, as a
   * function's 503 does: the host's own queue is too long. Default: none (only 503s are drops). When the
   * host drains (nothing inside), the limit starts over at its maximum.
   */
  readonly latencyTargetMs?: number;
  /** Clock in ms (injected in tests); default `performance.now`. */
  readonly now?: () => number;
  /** Limit changes and refusals (for logs or tests). */
  readonly on?: Partial<AdmissionEvents>;
}

/** A request let in by the door: `leave(status)` once it is answered (only the first call counts). */
export interface DoorPass {
  leave(status: number): void;
}

/** The precomputed refusal: status 503, headers and body. */
export interface DoorRefusal {
  readonly status: 503;
  readonly headers: Readonly<Record<string, string | number>>;
  readonly body: Buffer;
}

const UNGUARDED = new Set(['GET', 'HEAD', 'OPTIONS']);

/** The adaptive door (see the module comment). */
export class HostDoor {
  readonly #gate: AdmissionGate;
  /** The one refusal every refused request gets (built once: refusing allocates nothing per request). */
  readonly refusal: DoorRefusal;
  /** How long a refused keep-alive connection is held before its next request is read, ms (0 = not held). */
  readonly holdMs: number;
  /** The timer of those holds (`undefined` = the default). */
  readonly holdScheduler: HoldScheduler | undefined;
  readonly #now: () => number;
  readonly #latencyTargetMs: number | undefined;

  constructor(options: HostDoorOptions = {}) {
    this.#now = options.now ?? (() => performance.now());
    this.#latencyTargetMs = options.latencyTargetMs;
    const maxLimit = options.maxLimit ?? 1024;
    const retryAfterSec = options.retryAfterSec ?? 1;
    this.holdMs = Math.max(0, Math.min(options.holdMs ?? DEFAULT_HOLD_MS, retryAfterSec * 1000));
    this.holdScheduler = options.holdScheduler;
    this.#gate = new AdmissionGate(
      {
        maxLimit,
        minLimit: Math.min(options.minLimit ?? 16, maxLimit),
        intervalMs: options.intervalMs ?? 100,
        retryAfterSec,
      },
      this.#now,
      options.on,
    );
    const body = Buffer.from(
      JSON.stringify({
        type: 'about:blank',
        title: 'Service Unavailable',
        status: 503,
        code: 'overloaded',
        detail: 'The host is at capacity; retry after Retry-After seconds.',
      }),
    );
    this.refusal = {
      status: 503,
      headers: {
        'content-type': 'application/problem+json; charset=utf-8',
        'content-length': body.length,
        'retry-after': String(retryAfterSec),
      },
      body,
    };
  }

  /** The limit and counters (`refused` = answered by the door; `dropped` = answered 503 by the function). */
  get stats(): AdmissionStats {
    return this.#gate.stats;
  }

  /**
   * Decides for one routed request: `'unguarded'` for methods that always pass, a {@link DoorPass} when
   * admitted, `undefined` when refused (answer with {@link refusal}). Never waits.
   */
  enter(method: string): DoorPass | 'unguarded' | undefined {
    if (UNGUARDED.has(method)) return 'unguarded';
    const ticket = this.#gate.tryAdmit();
    if (ticket === undefined) return undefined;
    return {
      leave: (status) => {
        const target = this.#latencyTargetMs;
        const slow = target !== undefined && this.#now() - ticket.at > target;
        ticket.release(status === 503 || slow ? 'dropped' : 'ok');
        if (target !== undefined) this.#gate.restartIfDrained();
      },
    };
  }
}
