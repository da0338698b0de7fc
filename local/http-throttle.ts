/**
 * The Functions host's HTTP throttles (host.json `extensions.http`), with the host's semantics:
 *
 * - `maxConcurrentRequests`: at most this many HTTP-triggered functions execute at once; the next ones wait
 *   in the host, first come first served.
 * - `maxOutstandingRequests`: at most this many requests are held at once, waiting and executing together;
 *   a request over it is answered 429 at once and never reaches the function.
 * - `-1` (or absent) means unbounded, the default on dedicated plans.
 *
 * A request whose client has gone while it waits leaves the queue at once (its `enter` rejects with
 * {@link ClientGoneError}) and never takes a slot. A slot already granted belongs to the invocation: the
 * server gives it back when the invocation ends, at the latest at `functionTimeout` (`./http-server`).
 *
 * `dynamicThrottlesEnabled` (429 when the host's performance counters cross thresholds) reads counters of
 * the Functions host's sandbox that this machine does not have: it is not emulated; the local host says so.
 * @module
 */

/** host.json `extensions.http` throttles. */
export interface HttpThrottleOptions {
  /** Most HTTP functions executing at once; `-1` = unbounded. */
  readonly maxConcurrentRequests?: number;
  /** Most requests held (waiting + executing); over it, 429. `-1` = unbounded. */
  readonly maxOutstandingRequests?: number;
}

/**
 * Rejects a wait for a slot whose client went away first. No stack: it is an expected outcome, met by the
 * thousand when an overloaded host's clients give up, and each close must stay cheap.
 */
export class ClientGoneError extends Error {
  constructor() {
    const limit = Error.stackTraceLimit;
    Error.stackTraceLimit = 0;
    super('the client went away before the request was served');
    Error.stackTraceLimit = limit;
    this.name = 'ClientGoneError';
  }
}

/** Releases an execution slot (only the first call counts). */
export type ThrottleRelease = () => void;

const bound = (v: number | undefined): number => (v === undefined || v < 0 ? Number.POSITIVE_INFINITY : v);

/** The two throttles of one host (see the module comment). */
export class HttpThrottle {
  readonly #maxConcurrent: number;
  readonly #maxOutstanding: number;
  #executing = 0;
  /** Waiters in arrival order (a Set keeps insertion order and drops a gone client's waiter in O(1)). */
  readonly #waiting = new Set<() => void>();
  #rejected = 0;

  constructor(options: HttpThrottleOptions = {}) {
    this.#maxConcurrent = Math.max(1, bound(options.maxConcurrentRequests));
    this.#maxOutstanding = Math.max(1, bound(options.maxOutstandingRequests));
  }

  /** Requests held now: waiting and executing. */
  get outstanding(): number {
    return this.#executing + this.#waiting.size;
  }

  get stats(): { executing: number; waiting: number; rejected: number } {
    return { executing: this.#executing, waiting: this.#waiting.size, rejected: this.#rejected };
  }

  /**
   * Enters one request: `undefined` when it is over `maxOutstandingRequests` (answer 429), else a promise of
   * its execution slot, granted at once or when an earlier request releases one. When `gone` aborts while the
   * request waits, it leaves the queue and the promise rejects with {@link ClientGoneError}.
   */
  enter(gone?: AbortSignal): Promise<ThrottleRelease> | undefined {
    if (gone?.aborted === true) return Promise.reject(new ClientGoneError());
    if (this.outstanding >= this.#maxOutstanding) {
      this.#rejected++;
      return undefined;
    }
    if (this.#executing < this.#maxConcurrent) {
      this.#executing++;
      return Promise.resolve(this.#release());
    }
    return new Promise((resolve, reject) => {
      const onGone = (): void => {
        this.#waiting.delete(grant);
        reject(new ClientGoneError());
      };
      const grant = (): void => {
        gone?.removeEventListener('abort', onGone);
        resolve(this.#release());
      };
      this.#waiting.add(grant);
      gone?.addEventListener('abort', onGone, { once: true });
    });
  }

  #release(): ThrottleRelease {
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const next = this.#waiting.values().next();
      if (next.done === true) {
        this.#executing--;
        return;
      }
      this.#waiting.delete(next.value);
      next.value(); // the slot passes to the oldest waiter
    };
  }
}
