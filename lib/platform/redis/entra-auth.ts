import type { AccessToken, TokenCredential } from '@azure/identity';
import { unrefTimers, type Timers } from '../timers';

/** OAuth scope of Azure Cache for Redis / Azure Managed Redis. */
export const REDIS_SCOPE = 'https://redis.azure.com/.default';

/** A connection that can re-authenticate (an ioredis client is one); `options.password` is used on reconnect. */
export interface AuthTarget {
  auth(username: string, password: string): Promise<unknown>;
  readonly options: { password?: string | undefined };
  /** Connection state; only a `ready` connection is re-AUTHed (others use the new password when they connect). */
  readonly status?: string;
}

/**
 * When to refresh a token: at `refreshAfterTimestamp` or `marginMs` before expiry, whichever is first;
 * halfway through a lifetime shorter than that; never sooner than 1 s.
 * @returns delay from `now`, ms.
 */
export function refreshDelayMs(token: AccessToken, now: number, marginMs: number): number {
  let at = Math.min(token.refreshAfterTimestamp ?? Number.POSITIVE_INFINITY, token.expiresOnTimestamp - marginMs);
  if (at <= now) at = now + (token.expiresOnTimestamp - now) / 2;
  return Math.max(1000, Math.round(at - now));
}

/** What {@link EntraTokenAuth} reports (the context store's events include them). */
export interface EntraAuthEvents {
  /** The Entra token was refreshed and every connection re-authenticated. */
  tokenRefreshed(e: { expiresOnTimestamp: number; nextRefreshInMs: number }): void;
  /** Refreshing the Entra token (or re-authenticating with it) failed; retried. */
  tokenRefreshFailed(e: { message: string; retryInMs: number }): void;
}

/** Options of {@link EntraTokenAuth}. */
export interface EntraAuthOptions {
  readonly credential: TokenCredential;
  /** Redis username: the object id of the identity (`REDIS_ENTRA_OBJECT_ID`). */
  readonly username: string;
  /** Refresh this long before expiry, ms. Default 5 min. */
  readonly refreshMarginMs?: number;
  /** Delay before retrying a failed refresh, ms. Default 30 s. */
  readonly retryMs?: number;
  /** Wall clock, epoch ms (token timestamps are epoch). Default `Date.now`. */
  readonly now?: () => number;
  readonly timers?: Timers;
  readonly on?: Partial<EntraAuthEvents>;
}

/**
 * Microsoft Entra token auth for Redis: the token is the password, the identity's object id the username.
 * Refreshes the token before it expires and re-AUTHs every attached connection (and updates the password
 * they reconnect with). The token never appears in a log, an event or an error.
 */
export class EntraTokenAuth {
  private token: AccessToken;
  private readonly targets = new Set<AuthTarget>();
  private timer: unknown;
  private disposed = false;
  private readonly now: () => number;
  private readonly timers: Timers;

  private constructor(
    private readonly options: EntraAuthOptions,
    first: AccessToken,
  ) {
    this.token = first;
    this.now = options.now ?? Date.now;
    this.timers = options.timers ?? unrefTimers;
    this.schedule(refreshDelayMs(first, this.now(), this.margin));
  }

  /**
   * Gets the first token and schedules its refresh.
   * @throws Error (without token material) when no token can be obtained.
   */
  static async create(options: EntraAuthOptions): Promise<EntraTokenAuth> {
    const token = await options.credential.getToken(REDIS_SCOPE);
    if (token === null) throw new Error('the credential returned no token for Redis');
    return new EntraTokenAuth(options, token);
  }

  get username(): string {
    return this.options.username;
  }
  /** The current token (the Redis password). */
  get password(): string {
    return this.token.token;
  }
  /** Expiry of the current token, epoch ms. */
  get expiresOnTimestamp(): number {
    return this.token.expiresOnTimestamp;
  }

  /** Re-AUTHs `target` at every refresh from now on (and keeps its reconnect password current). */
  attach(target: AuthTarget): void {
    target.options.password = this.token.token;
    this.targets.add(target);
  }

  /** Forgets a connection. */
  detach(target: AuthTarget): void {
    this.targets.delete(target);
  }

  /** Refreshes now (also what the timer calls). Never throws: failures are reported and retried. */
  async refresh(): Promise<void> {
    if (this.disposed) return;
    const retryInMs = this.options.retryMs ?? 30_000;
    let token: AccessToken | null;
    try {
      token = await this.options.credential.getToken(REDIS_SCOPE);
      if (token === null) throw new Error('the credential returned no token for Redis');
    } catch (err) {
      this.schedule(retryInMs);
      this.options.on?.tokenRefreshFailed?.({ message: this.safeMessage(err), retryInMs });
      return;
    }
    this.token = token;
    const live = [...this.targets].filter((t) => t.status === undefined || t.status === 'ready');
    for (const t of this.targets) t.options.password = token.token;
    const results = await Promise.allSettled(live.map((t) => t.auth(this.options.username, token.token)));
    const failed = results.find((r): r is PromiseRejectedResult => r.status === 'rejected');
    if (failed !== undefined) {
      // the connections keep their old session; they reconnect with the new token. Retry AUTH soon.
      this.schedule(retryInMs);
      this.options.on?.tokenRefreshFailed?.({ message: this.safeMessage(failed.reason), retryInMs });
      return;
    }
    const next = refreshDelayMs(token, this.now(), this.margin);
    this.schedule(next);
    this.options.on?.tokenRefreshed?.({ expiresOnTimestamp: token.expiresOnTimestamp, nextRefreshInMs: next });
  }

  private safeMessage(err: unknown): string {
    const m = err instanceof Error ? err.message : 'unknown error';
    return m.split(this.token.token).join('[redacted]');
  }

  dispose(): void {
    this.disposed = true;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = undefined;
    this.targets.clear();
  }

  private get margin(): number {
    return this.options.refreshMarginMs ?? 5 * 60_000;
  }

  private schedule(ms: number): void {
    if (this.disposed) return;
    if (this.timer !== undefined) this.timers.clearTimeout(this.timer);
    this.timer = this.timers.setTimeout(() => void this.refresh(), ms);
  }
}
