import type { Redis } from 'ioredis';
import type { UserProfile } from '../domain/user-context';
import type { ContextKeys } from './keys';
import { asUserProfile } from './profile-schema';

/**
 * The origin of the context cache: where a profile comes from on a miss. Implementations share one
 * contract suite. `load` resolves `null` for a user without a profile and rejects when the origin fails
 * or holds an invalid record (the caller then degrades).
 */
export interface ContextSource {
  load(userId: string, sessionId?: string): Promise<UserProfile | null>;
}

/** A source that can also store profiles (seeding, profile updates). */
export interface WritableContextSource extends ContextSource {
  /** Stores (or, with `null`, deletes) a user's profile. */
  put(userId: string, profile: UserProfile | null): Promise<void>;
}

function parseRecord(text: string): UserProfile {
  let doc: unknown;
  try {
    doc = JSON.parse(text);
  } catch {
    throw new Error('profile record is not JSON');
  }
  const p = asUserProfile(doc);
  if (p === undefined) throw new Error('profile record does not match the profile schema');
  return p;
}

/** The default origin: profiles stored as JSON in Redis under `{prefix}profile:{userId}` (see `npm run seed:profiles`). */
export class RedisProfileSource implements WritableContextSource {
  constructor(
    private readonly client: Redis,
    private readonly keys: ContextKeys,
  ) {}
  async load(userId: string): Promise<UserProfile | null> {
    const text = await this.client.get(this.keys.profile(userId));
    return text === null ? null : parseRecord(text);
  }
  async put(userId: string, profile: UserProfile | null): Promise<void> {
    const key = this.keys.profile(userId);
    if (profile === null) await this.client.del(key);
    else await this.client.set(key, JSON.stringify(profile));
  }
}

/** In-process origin (the in-process store; tests). Bounded only by what is put in it. */
export class MemoryProfileSource implements WritableContextSource {
  private readonly profiles = new Map<string, UserProfile>();
  load(userId: string): Promise<UserProfile | null> {
    return Promise.resolve(this.profiles.get(userId) ?? null);
  }
  put(userId: string, profile: UserProfile | null): Promise<void> {
    if (profile === null) this.profiles.delete(userId);
    else this.profiles.set(userId, profile);
    return Promise.resolve();
  }
}

/** Options of an {@link HttpProfileSource}. */
export interface HttpSourceOptions {
  /** Base URL; a profile is read from `GET {baseUrl}/{userId}` (`CONTEXT_SOURCE_URL`). */
  readonly baseUrl: string;
  /** Per-request timeout, ms (`CONTEXT_SOURCE_TIMEOUT_MS`, default 100). */
  readonly timeoutMs: number;
  /** Default global `fetch`. */
  readonly fetch?: typeof fetch;
}

/**
 * The documented alternative origin: a profile service over HTTP. `200` with a profile JSON body → the
 * profile; `404` → no profile; anything else, a timeout or an invalid body → rejects.
 */
export class HttpProfileSource implements ContextSource {
  private readonly fetch: typeof fetch;
  private readonly base: string;
  constructor(private readonly options: HttpSourceOptions) {
    this.fetch = options.fetch ?? fetch;
    this.base = options.baseUrl.replace(/\/+$/, '');
  }
  async load(userId: string): Promise<UserProfile | null> {
    const res = await this.fetch(`${this.base}/${encodeURIComponent(userId)}`, {
      headers: { accept: 'application/json' },
      signal: AbortSignal.timeout(this.options.timeoutMs),
    });
    if (res.status === 404) {
      await res.body?.cancel();
      return null;
    }
    if (res.status !== 200) {
      await res.body?.cancel();
      throw new Error(`profile service answered ${res.status}`);
    }
    return parseRecord(await res.text());
  }
}
