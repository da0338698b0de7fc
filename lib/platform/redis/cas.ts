import { AppError } from '../../errors/errors';
import type { RedisCall } from './call';
import { runScript } from './script';

/** Writes the hash only if its generation is still the one read, and announces the write in the same step. */
const CAS = `
local g = redis.call('HGET', KEYS[1], 'generation')
if (g or ARGV[6]) ~= ARGV[1] then return 0 end
redis.call('HSET', KEYS[1], 'generation', ARGV[2], 'state', ARGV[3])
redis.call('PUBLISH', ARGV[4], ARGV[5])
return 1`;

/** Where a compare-and-set writes, and what it says when it gives up. */
export interface CasTarget {
  /** The hash holding `generation` and `state` (JSON). */
  readonly key: string;
  /** The channel that hears `{ name, generation }` with each write. */
  readonly channel: string;
  /** The name in the announcement. */
  readonly name: string;
  /** What an absent `generation` field compares equal to (as the store's read reports it), e.g. `none` or `0`. */
  readonly missing: string;
  /** Lost races before giving up. */
  readonly attempts: number;
  /** Message of the `conflict` error after the last lost race. */
  readonly conflict: string;
}

/** One attempt, from a fresh read: the generation read, what to return, and the state to write (none: no change). */
export interface CasAttempt<R> {
  /** The generation read, as the store reports it (`CasTarget.missing` when there is none). */
  readonly expected: string;
  readonly result: R;
  readonly write: { readonly generation: number; readonly state: string } | undefined;
}

/**
 * Read-modify-write of a Redis hash `{ generation, state }` by compare-and-set (Lua): each attempt reads
 * and decides (`attempt`); a write lands only if the generation is still the one read, and publishes
 * `{ name, generation }` on the channel in the same step. A lost race retries from a fresh read.
 * @param call the store's call wrapper (its Redis failures stay the store's own errors).
 * @returns the result of the attempt that wrote, or that needed no write.
 * @throws AppError `conflict` (transient, retry after 1 s) after `target.attempts` lost races.
 */
export async function redisCas<R>(
  call: RedisCall,
  target: CasTarget,
  attempt: () => Promise<CasAttempt<R>>,
): Promise<R> {
  for (let i = 0; i < target.attempts; i++) {
    const a = await attempt();
    const w = a.write;
    if (w === undefined) return a.result;
    const message = JSON.stringify({ name: target.name, generation: w.generation });
    const args = [a.expected, String(w.generation), w.state, target.channel, message, target.missing];
    const ok = await call((r) => runScript(r, CAS, [target.key], args));
    if (ok === 1) return a.result;
  }
  throw new AppError('conflict', target.conflict, { transient: true, retryAfterSec: 1 });
}
