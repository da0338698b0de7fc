import type { UserProfile } from '../domain/user-context';
import { decodeFrame, encodeFrame, type DecodeFailure } from './codec';
import { asUserProfile } from './profile-schema';

/**
 * What the context cache holds for one key: the user's profile, or `null` for a user known to have none
 * (negative results are cached too, so unknown users do not hit the origin on every payment).
 */
export interface CachedContext {
  readonly profile: UserProfile | null;
}

/** A cached value with the time it was stored (epoch ms, on the writer's clock): tiers check TTLs with it. */
export interface StoredContext {
  readonly value: CachedContext;
  readonly storedAt: number;
}

/** Why a stored value was rejected (treated as a miss). */
export type ValueFailure = DecodeFailure | 'bad_json' | 'bad_schema';

/** JSON text of a stored value: `{"s": storedAt, "p": profile | null}`. */
export function contextJson(value: CachedContext, storedAt: number): string {
  return JSON.stringify({ s: storedAt, p: value.profile });
}

/** Encodes a stored value: JSON, framed and LZ4-compressed (see `codec.ts`). */
export function encodeContext(value: CachedContext, storedAt: number): Buffer {
  return encodeFrame(Buffer.from(contextJson(value, storedAt), 'utf8'));
}

/** Decodes a stored value. Never throws: a foreign, corrupted or invalid value is a failure. */
export function decodeContext(
  frame: Buffer,
): { ok: true; stored: StoredContext; rawBytes: number } | { ok: false; reason: ValueFailure } {
  const r = decodeFrame(frame);
  if (!r.ok) return r;
  let doc: unknown;
  try {
    doc = JSON.parse(r.raw.toString('utf8'));
  } catch {
    return { ok: false, reason: 'bad_json' };
  }
  if (typeof doc !== 'object' || doc === null) return { ok: false, reason: 'bad_schema' };
  const { s, p } = doc as { s?: unknown; p?: unknown };
  if (typeof s !== 'number' || !Number.isFinite(s)) return { ok: false, reason: 'bad_schema' };
  if (p === null) return { ok: true, stored: { value: { profile: null }, storedAt: s }, rawBytes: r.raw.length };
  const profile = asUserProfile(p);
  if (profile === undefined) return { ok: false, reason: 'bad_schema' };
  return { ok: true, stored: { value: { profile }, storedAt: s }, rawBytes: r.raw.length };
}
