/**
 * Four-eyes on the admin of any artifact kind: a change that makes a version serve (a promote, or a canary or shadow
 * share) takes effect only when a second lead asks for the same change. The first lead's request is kept fleet-wide
 * (a pointer store of the kind's pending requests, one entry per artifact name) and answered 202 with what it
 * awaits; the same lead asking again changes nothing. Rollback and ending a split stay direct: they go back to what
 * served. A kind turns it on by wrapping its admin with {@link FourEyes.admin}; the audit trail wraps the result, as
 * it wraps any admin.
 * @module
 */
import { AwaitingApproval, type ArtifactAdmin } from '../http/admin-routes';
import type { AdminBodies } from './admin-bodies';
import type { Generational, PointerStore } from './pointer-store';

/** A request not confirmed within this is dropped, ms (a day). */
export const PENDING_TTL_MS = 24 * 3600_000;
/** Most pending requests kept per artifact name (the oldest dropped). */
export const MAX_PENDING = 20;

/** A change one lead asked for, awaiting a second lead. */
export interface PendingChange {
  readonly change: 'promote' | 'traffic';
  /** The version it makes serve (the promoted version, or the candidate). */
  readonly version: string;
  /** A traffic change's shares. */
  readonly canaryPercent?: number;
  readonly shadowPercent?: number;
  /** The lead who asked. */
  readonly requestedBy: string;
  /** ISO 8601. */
  readonly at: string;
}

/** The pending requests of one artifact name. */
export interface ApprovalState extends Generational {
  /** Newest first. */
  readonly pending: readonly PendingChange[];
}

/** A stored state's JSON text → the state. */
export function parseApprovalState(text: string): ApprovalState {
  const s = JSON.parse(text) as Partial<ApprovalState>;
  return {
    generation: typeof s.generation === 'number' ? s.generation : 0,
    pending: Array.isArray(s.pending) ? s.pending : [],
  };
}

/** The body of a 202: the request kept and what it awaits. */
export interface PendingAnswer {
  readonly name: string;
  readonly pending: PendingChange;
  readonly awaiting: string;
}

/** Dependencies of {@link FourEyes}. */
export interface FourEyesDeps {
  /** How answers name the kind, e.g. `model`. */
  readonly kind: string;
  readonly store: PointerStore<ApprovalState>;
  /** The kind's admin bodies (the same parsing as its admin's, so a bad body is 400 before anything else). */
  readonly bodies: AdminBodies;
  /** Wall clock, epoch ms. */
  readonly wallNow: () => number;
  /**
   * Whether the change would be taken now (a name served here, a known version, not the active one): a request that
   * would be refused is refused at once, never kept. Default none (only the bodies are checked).
   */
  readonly check?: (name: string, change: 'promote' | 'traffic', body: unknown) => Promise<void>;
}

type Change = Omit<PendingChange, 'requestedBy' | 'at'>;

const sameChange = (a: Change, b: Change): boolean =>
  a.change === b.change &&
  a.version === b.version &&
  a.canaryPercent === b.canaryPercent &&
  a.shadowPercent === b.shadowPercent;

/** The four-eyes rule of one kind. */
export class FourEyes {
  constructor(private readonly d: FourEyesDeps) {}

  /**
   * `inner` with the rule, acting as the lead `lead()` names (it throws `forbidden`/`unauthenticated` for anyone
   * else, and is asked only for a gated change).
   */
  admin(inner: ArtifactAdmin, lead: () => string): ArtifactAdmin {
    return {
      status: (name) => inner.status(name),
      rollback: (name) => inner.rollback(name),
      promote: async (name, body) => {
        const version = this.d.bodies.version(body);
        return this.gated(name, lead, body, { change: 'promote', version }, () => inner.promote(name, body));
      },
      traffic: async (name, body) => {
        const t = this.d.bodies.traffic(body);
        if (t.canaryPercent === 0 && t.shadowPercent === 0) return inner.traffic(name, body);
        const change: Change = {
          change: 'traffic',
          version: t.candidate,
          canaryPercent: t.canaryPercent,
          shadowPercent: t.shadowPercent,
        };
        return this.gated(name, lead, body, change, () => inner.traffic(name, body));
      },
    };
  }

  /** The pending requests of `name`, newest first (expired ones left out). */
  async pending(name: string): Promise<readonly PendingChange[]> {
    const since = this.d.wallNow() - PENDING_TTL_MS;
    return ((await this.d.store.read(name))?.pending ?? []).filter((p) => Date.parse(p.at) > since);
  }

  dispose(): Promise<void> {
    return this.d.store.dispose();
  }

  private async gated(
    name: string,
    lead: () => string,
    body: unknown,
    change: Change,
    run: () => Promise<unknown>,
  ): Promise<unknown> {
    const by = lead();
    await this.d.check?.(name, change.change, body);
    const now = this.d.wallNow();
    let asked: PendingChange | undefined;
    await this.d.store.update(name, (cur) => {
      const pending = (cur?.pending ?? []).filter((p) => Date.parse(p.at) > now - PENDING_TTL_MS);
      asked = pending.find((p) => sameChange(p, change));
      if (asked !== undefined) return undefined;
      asked = { ...change, requestedBy: by, at: new Date(now).toISOString() };
      return { generation: cur?.generation ?? 0, pending: [asked, ...pending].slice(0, MAX_PENDING) };
    });
    if (asked === undefined || asked.requestedBy === by) {
      const pending = asked ?? { ...change, requestedBy: by, at: new Date(now).toISOString() };
      const answer: PendingAnswer = { name, pending, awaiting: `another lead asks for the same ${this.d.kind} change` };
      return new AwaitingApproval(answer);
    }
    const result = await run(); // a refusal keeps the request: it may succeed later
    await this.d.store.update(name, (cur) =>
      cur === undefined || !cur.pending.some((p) => sameChange(p, change))
        ? undefined
        : { ...cur, pending: cur.pending.filter((p) => !sameChange(p, change)) },
    );
    return result;
  }
}
