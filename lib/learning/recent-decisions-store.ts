/**
 * The per-user read model of recent decisions (docs/cases.md "Recent payments"): for each user, keyed by the keyed
 * hash of the user id (never the raw id), the last `perUser` decisions, newest first, each a compact entry of a
 * few fields, kept at most `ttlMs` after the user's last decision. Two stores behind {@link RecentDecisionStore}, one
 * contract suite (test/learning/recent-decisions-contract.ts): Redis (lib/learning/recent-decisions-redis.ts) and
 * the in-process store here (a bounded number of users, least recently written forgotten first).
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { DecidedPayment } from '../scoring/scorer';

/** One decided payment as the read model keeps it. */
export interface RecentDecision {
  readonly transactionId: string;
  /** When it was decided (ISO 8601 UTC). */
  readonly decidedAt: string;
  readonly amount: number;
  readonly currency: string;
  readonly merchantId: string;
  /** `approve`, `decline`, `review`, … */
  readonly decision: string;
  readonly score: number | null;
  /** The ids of the rules that fired (at most {@link MAX_RULES_PER_ENTRY}). */
  readonly rules: readonly string[];
  readonly modelVersion: string;
}

/** Rule ids kept per entry at most (an entry stays small whatever the ruleset). */
export const MAX_RULES_PER_ENTRY = 16;
/** Characters kept of a rule id or a model version. */
const MAX_NAME = 128;

/** Entries of one batch for one user (by the keyed hash of the user id), oldest first. */
export type RecentBatch = ReadonlyMap<string, readonly RecentDecision[]>;

/** Where the recent decisions are kept. */
export interface RecentDecisionStore {
  /** Adds each user's entries (oldest first), keeps the newest `perUser`, and sets the user's TTL. */
  add(batch: RecentBatch): Promise<void>;
  /** The user's entries, newest first (empty when none or expired). */
  read(userHash: string): Promise<RecentDecision[]>;
  /** Deletes the user's entries; whether there were any. */
  erase(userHash: string): Promise<boolean>;
  dispose(): Promise<void>;
}

/** How many entries a store keeps per user and for how long. */
export interface RecentBounds {
  /** Entries per user at most (`RECENT_DECISIONS_PER_USER`). */
  readonly perUser: number;
  /** How long a user's entries live after their last decision, ms (`RECENT_DECISIONS_TTL_DAYS`). */
  readonly ttlMs: number;
}

/** The compact entry of a decided payment (a copy of a few fields: no payment object is kept or serialized). */
export function recentEntryOf(d: DecidedPayment, decidedAtMs: number): RecentDecision {
  const r = d.result;
  const fired = r.rules ?? [];
  const rules: string[] = [];
  for (let i = 0; i < fired.length && i < MAX_RULES_PER_ENTRY; i++)
    rules.push((fired[i] as { id: string }).id.slice(0, MAX_NAME));
  return {
    transactionId: r.transactionId,
    decidedAt: new Date(decidedAtMs).toISOString(),
    amount: d.event.amount,
    currency: d.event.currency,
    merchantId: d.event.merchantId,
    decision: r.decision,
    score: r.score,
    rules,
    modelVersion: r.model.version.slice(0, MAX_NAME),
  };
}

/** One entry as a JSON array (the Redis list's element): field names are not repeated in every entry. */
export function encodeEntry(e: RecentDecision): string {
  return JSON.stringify([
    e.transactionId,
    e.decidedAt,
    e.amount,
    e.currency,
    e.merchantId,
    e.decision,
    e.score,
    e.rules,
    e.modelVersion,
  ]);
}

/** The entry of {@link encodeEntry}'s text; `undefined` for anything else (skipped by readers). */
export function decodeEntry(text: string): RecentDecision | undefined {
  let v: unknown;
  try {
    v = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(v) || v.length !== 9) return undefined;
  const [transactionId, decidedAt, amount, currency, merchantId, decision, score, rules, modelVersion] = v as unknown[];
  const str = (x: unknown): x is string => typeof x === 'string';
  if (!str(transactionId) || !str(decidedAt) || !str(currency) || !str(merchantId) || !str(decision)) return undefined;
  if (typeof amount !== 'number' || !(score === null || typeof score === 'number') || !str(modelVersion))
    return undefined;
  if (!Array.isArray(rules) || !rules.every(str)) return undefined;
  return { transactionId, decidedAt, amount, currency, merchantId, decision, score, rules, modelVersion };
}

/** Options of a {@link MemoryRecentDecisionStore}. */
export interface MemoryRecentOptions extends RecentBounds {
  /** Users kept at most; the least recently written is forgotten first (`RECENT_DECISIONS_MAX_USERS`). */
  readonly maxUsers: number;
  /** Wall clock, ms (the TTL). Default `Date.now`. */
  readonly wallClock?: () => number;
}

interface MemoryUser {
  /** Newest first. */
  entries: RecentDecision[];
  expiresAt: number;
}

/** The in-process store (`npm start`, and wherever no Redis is configured): lost at restart. */
export class MemoryRecentDecisionStore implements RecentDecisionStore {
  private readonly users: LRUCache<string, MemoryUser>;
  private readonly wallClock: () => number;

  constructor(private readonly o: MemoryRecentOptions) {
    this.users = new LRUCache<string, MemoryUser>({ max: o.maxUsers });
    this.wallClock = o.wallClock ?? Date.now;
  }

  add(batch: RecentBatch): Promise<void> {
    const now = this.wallClock();
    for (const [hash, added] of batch) {
      const u = this.live(hash, now) ?? { entries: [], expiresAt: 0 };
      for (const e of added) u.entries.unshift(e);
      if (u.entries.length > this.o.perUser) u.entries.length = this.o.perUser;
      u.expiresAt = now + this.o.ttlMs;
      this.users.set(hash, u);
    }
    return Promise.resolve();
  }

  read(userHash: string): Promise<RecentDecision[]> {
    return Promise.resolve([...(this.live(userHash, this.wallClock(), false)?.entries ?? [])]);
  }

  erase(userHash: string): Promise<boolean> {
    return Promise.resolve(this.users.delete(userHash));
  }

  /** The user hashes kept (tests: no raw id is a key). */
  keys(): string[] {
    return [...this.users.keys()];
  }

  /** When the user's entries expire, ms since the epoch (`undefined`: none kept). */
  expiresAt(userHash: string): number | undefined {
    return this.live(userHash, this.wallClock(), false)?.expiresAt;
  }

  dispose(): Promise<void> {
    this.users.clear();
    return Promise.resolve();
  }

  /** The user's record unless expired (an expired one is deleted). */
  private live(hash: string, now: number, touch = true): MemoryUser | undefined {
    const u = touch ? this.users.get(hash) : this.users.peek(hash);
    if (u === undefined) return undefined;
    if (u.expiresAt > now) return u;
    this.users.delete(hash);
    return undefined;
  }
}
