/**
 * The one pointer store of every versioned artifact (models, rulesets, and any kind added later): per artifact
 * name of one kind, the pointer's state (active version, candidate and its traffic shares, history: what each kind
 * keeps in its own state type), stored by compare-and-set on `generation` and announced to every instance; and the
 * last rejected uploads, newest first. On Redis ({@link RedisPointerStore}, shared by every instance) or in process
 * ({@link MemoryPointerStore}, one instance; kept in a JSON file when a state dir is set). One contract suite runs
 * against both (`test/rollout/pointer-store-contract.test.ts`).
 * @module
 */
import type { ErrorCode, FieldError } from '../errors/errors';
import type { JsonFileMap } from '../persistence/json-file-map';

/** Rejections kept per artifact name. */
export const MAX_REJECTIONS = 20;
/** Compare-and-set attempts before an update gives up (`conflict`). */
export const MAX_CAS_ATTEMPTS = 8;

/** What every kind's pointer state carries: the generation the store compares and sets on. */
export interface Generational {
  /** Bumped by every change (the store sets it: the one read + 1). */
  readonly generation: number;
}

/** A refused upload, as the admin APIs show it (the same shape for every kind). */
export interface Rejection {
  readonly name: string;
  readonly version: string;
  /** The blob or file the upload came from. */
  readonly blobPath: string;
  /** Which step refused it (`blobPath`, `name`, `size`, `validate`, `version`, or a kind's own step). */
  readonly check: string;
  readonly code: ErrorCode;
  readonly reason: string;
  readonly errors: readonly FieldError[];
  /** Instance that validated the upload. */
  readonly by: string;
  /** ISO 8601. */
  readonly at: string;
}

/** The result of an update: the state after it, and whether it changed (a no-op writes and announces nothing). */
export interface PointerUpdate<S> {
  readonly state: S | undefined;
  readonly changed: boolean;
}

/**
 * Called when a pointer changed (`generation` is the new one). After a reconnect, `name = "*"` and
 * `generation = -1`: announcements may have been missed, re-read.
 */
export type PointerListener = (name: string, generation: number) => void;

/** Persistence and announcement of the pointers of one artifact kind. */
export interface PointerStore<S extends Generational> {
  /** How logs name it, e.g. `redis` or `in-process`. */
  readonly description: string;
  /** The pointer of `name`, if any was written. @throws AppError `dependency_unavailable`. */
  read(name: string): Promise<S | undefined>;
  /**
   * Applies `fn` atomically (compare-and-set on `generation`, retried from a fresh read on races) and announces the
   * change; `fn` returns the next state (its generation is set by the store) or `undefined` for no change. Errors
   * thrown by `fn` propagate and change nothing.
   * @throws AppError `dependency_unavailable`, `conflict` (too many concurrent writers).
   */
  update(name: string, fn: (current: S | undefined) => S | undefined): Promise<PointerUpdate<S>>;
  /** Listens for changes by any instance (idempotent). Resolves true once subscribed; false if not (yet). */
  subscribe(listener: PointerListener): Promise<boolean>;
  /** Keeps a rejection (at most {@link MAX_REJECTIONS} per name). */
  recordRejection(r: Rejection): Promise<void>;
  /** Newest first, at most {@link MAX_REJECTIONS}. */
  rejections(name: string): Promise<Rejection[]>;
  dispose(): Promise<void>;
}

/** Sets the generation of a next state: the one read + 1. */
export function nextGeneration<S extends Generational>(current: S | undefined, next: S): S {
  return { ...next, generation: (current?.generation ?? 0) + 1 };
}

/**
 * The in-process store (no Redis): one instance, same contract. Announcements are asynchronous, as pub/sub's are.
 * States are kept as JSON text, so a caller never holds the store's own object.
 */
export class MemoryPointerStore<S extends Generational> implements PointerStore<S> {
  readonly description: string;
  private readonly states = new Map<string, string>();
  private readonly rejected = new Map<string, Rejection[]>();
  private readonly listeners = new Set<PointerListener>();
  private disposed = false;

  /**
   * @param file where the pointers are kept across restarts (embedded defaults: `ROLLOUT_STATE_DIR`); default none,
   *   in memory only.
   * @param parse a kept state's JSON text → the state in the current format (default: as kept).
   */
  constructor(
    private readonly file?: JsonFileMap<S>,
    parse: (text: string) => S = (t) => JSON.parse(t) as S,
  ) {
    this.description = file === undefined ? 'in-process' : `in-process, kept in ${file.file}`;
    for (const [name, state] of file?.entries() ?? [])
      this.states.set(name, JSON.stringify(parse(JSON.stringify(state))));
  }

  read(name: string): Promise<S | undefined> {
    const s = this.states.get(name);
    return Promise.resolve(s === undefined ? undefined : (JSON.parse(s) as S));
  }

  update(name: string, fn: (current: S | undefined) => S | undefined): Promise<PointerUpdate<S>> {
    // read, apply and write in one synchronous step: no other update can interleave
    const raw = this.states.get(name);
    const cur = raw === undefined ? undefined : (JSON.parse(raw) as S);
    let next: S | undefined;
    try {
      next = fn(cur);
    } catch (err) {
      return Promise.reject(err);
    }
    if (next === undefined) return Promise.resolve({ state: cur, changed: false });
    const s = nextGeneration(cur, next);
    this.states.set(name, JSON.stringify(s));
    this.file?.set(name, s);
    for (const l of this.listeners) setImmediate(() => !this.disposed && l(name, s.generation));
    return Promise.resolve({ state: JSON.parse(JSON.stringify(s)) as S, changed: true });
  }

  subscribe(listener: PointerListener): Promise<boolean> {
    this.listeners.add(listener);
    return Promise.resolve(!this.disposed);
  }

  recordRejection(r: Rejection): Promise<void> {
    this.rejected.set(r.name, [r, ...(this.rejected.get(r.name) ?? [])].slice(0, MAX_REJECTIONS));
    return Promise.resolve();
  }

  rejections(name: string): Promise<Rejection[]> {
    return Promise.resolve([...(this.rejected.get(name) ?? [])]);
  }

  dispose(): Promise<void> {
    this.disposed = true;
    this.listeners.clear();
    return Promise.resolve();
  }
}
