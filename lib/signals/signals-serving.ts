/**
 * What the scoring pipeline reads of the signals rollout on one instance: an immutable {@link ServedSignals} (the
 * active version, the candidate and its shares, the aggregate plan of both), swapped atomically as the pointer
 * moves. A payment takes `serving.current` once and uses only that snapshot.
 *
 * The plan is the UNION of the active and candidate versions' aggregates (deduplicated by spec id: a definition both
 * keep is counted once), so a candidate's new aggregates are recorded on all traffic and are warm when it is
 * promoted; each version reads its own values back from the union's with {@link ServedSignals.valuesFor} (an index
 * map built once per snapshot, no allocation with an `out` array). Without a candidate the plan is the active
 * version's own and nothing is remapped.
 * @module
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { TrafficSplit } from '../rollout/admin-bodies';
import type { AggregateInput, AggregatePlan, AggregateSpec, KeyGroup } from './aggregate-store';
import type { CompiledSignals } from './compiled-signals';
import { SIGNALS_TRAFFIC } from './signals-traffic';

/** How one version's plan maps into the union plan. */
interface VersionMap {
  readonly signals: CompiledSignals;
  /** Per aggregate of the version (its plan order): its index in the union plan. */
  readonly aggregates: Int32Array;
  /** Per group of the version: its index in the union plan's groups. */
  readonly groups: Int32Array;
  /** Whether the version's aggregates are the union's first ones, in order (its values are a prefix of the union's). */
  readonly prefix: boolean;
}

/** The union plan of `versions` (first one's aggregates first) and how each maps into it. */
export function unionPlan(versions: readonly CompiledSignals[]): { plan: AggregatePlan; maps: VersionMap[] } {
  const aggregates: AggregateSpec[] = [];
  const byId = new Map<string, number>();
  const groups: { key: KeyGroup['key']; id: string; aggregates: number[] }[] = [];
  const groupById = new Map<string, number>();
  const maps = versions.map((signals): VersionMap => {
    const own = signals.plan;
    const aggMap = new Int32Array(own.aggregates.length);
    own.aggregates.forEach((spec, i) => {
      let u = byId.get(spec.id);
      if (u === undefined) {
        u = aggregates.push(spec) - 1;
        byId.set(spec.id, u);
      }
      aggMap[i] = u;
    });
    const groupMap = new Int32Array(own.groups.length);
    own.groups.forEach((g, gi) => {
      let u = groupById.get(g.id);
      if (u === undefined) {
        u = groups.push({ key: g.key, id: g.id, aggregates: [] }) - 1;
        groupById.set(g.id, u);
      }
      groupMap[gi] = u;
      const target = groups[u] as { aggregates: number[] };
      for (const i of g.aggregates) {
        const ua = aggMap[i] as number;
        if (!target.aggregates.includes(ua)) target.aggregates.push(ua);
      }
    });
    return { signals, aggregates: aggMap, groups: groupMap, prefix: aggMap.every((u, i) => u === i) };
  });
  const first = versions[0];
  // one version: its own plan, as it is
  return { plan: versions.length === 1 && first !== undefined ? first.plan : { aggregates, groups }, maps };
}

/** One immutable state of the signals served here. */
export class ServedSignals {
  /** The aggregates to read and record for every payment: the active and candidate versions' union. */
  readonly plan: AggregatePlan;
  private readonly maps = new Map<string, VersionMap>();
  private readonly order: readonly VersionMap[];

  /**
   * @param active the version that serves every payment outside the canary share.
   * @param candidate the pointer's candidate, loaded, with its split (`split.candidate` is its version).
   */
  constructor(
    readonly active: CompiledSignals,
    readonly candidate: CompiledSignals | undefined = undefined,
    readonly split: TrafficSplit | undefined = undefined,
  ) {
    const versions = candidate === undefined || candidate.version === active.version ? [active] : [active, candidate];
    const { plan, maps } = unionPlan(versions);
    this.plan = plan;
    for (const m of maps) this.maps.set(m.signals.version, m);
    this.order = maps;
  }

  /** The version that computes the signals of `userId`'s payments: the candidate within its canary share, else the active one. */
  forUser(userId: string): CompiledSignals {
    const c = this.candidate;
    const s = this.split;
    if (c !== undefined && s !== undefined && SIGNALS_TRAFFIC.inCanary(userId, s.canaryPercent)) return c;
    return this.active;
  }

  /**
   * The candidate, when the payment `transactionId` of a user it does not already serve falls in its shadow share
   * (computed off the decision, for comparison); else `undefined`.
   */
  shadowFor(userId: string, transactionId: string): CompiledSignals | undefined {
    const c = this.candidate;
    const s = this.split;
    if (c === undefined || s === undefined || this.forUser(userId) === c) return undefined;
    return SIGNALS_TRAFFIC.inShadow(transactionId, s.shadowPercent) ? c : undefined;
  }

  /**
   * What the payment brings to {@link plan}: each version's own input merged into the union's (a group or an aggregate
   * both versions share is the same definition, so either version's part is the same).
   */
  aggregateInput(event: PaymentEvent, transactionId: string, at: number): AggregateInput {
    const [first, ...rest] = this.order;
    if (first === undefined) return { transactionId, at, entities: [], counted: [], values: [] };
    if (rest.length === 0) return first.signals.aggregateInput(event, transactionId, at); // the plan is its own
    const entities: (string | undefined)[] = new Array<string | undefined>(this.plan.groups.length).fill(undefined);
    const counted: boolean[] = new Array<boolean>(this.plan.aggregates.length).fill(false);
    const values: (number | string | undefined)[] = new Array<undefined>(this.plan.aggregates.length).fill(undefined);
    for (const m of [first, ...rest]) {
      const input = m.signals.aggregateInput(event, transactionId, at);
      m.groups.forEach((u, gi) => (entities[u] = input.entities[gi]));
      m.aggregates.forEach((u, i) => {
        counted[u] = input.counted[i] ?? false;
        values[u] = input.values[i];
      });
    }
    return { transactionId, at, entities, counted, values };
  }

  /**
   * `version`'s aggregate values, in its own plan order, from the values the store answered for {@link plan}.
   * Without a candidate this is `union` itself, and for the active version a view of its first values; else the
   * values are written into `out` (allocated when absent).
   * @throws Error when `version` is neither the active nor the candidate version of this snapshot.
   */
  valuesFor(version: string, union: Float64Array, out?: Float64Array): Float64Array {
    const m = this.maps.get(version);
    if (m === undefined) throw new Error(`signals ${version} is not served by this snapshot`);
    const n = m.aggregates.length;
    if (m.prefix && n === union.length) return union;
    if (m.prefix && out === undefined) return union.subarray(0, n);
    const target = out ?? new Float64Array(n);
    for (let i = 0; i < n; i++) target[i] = union[m.aggregates[i] as number] ?? 0;
    return target;
  }
}

/** The signals served on this instance, swapped atomically. */
export class SignalsServing {
  private snapshot: ServedSignals;

  /** @param initial the version served until the pointer names another (the shipped one). */
  constructor(initial: CompiledSignals) {
    this.snapshot = new ServedSignals(initial);
  }

  /** What a payment uses: read once per payment. */
  get current(): ServedSignals {
    return this.snapshot;
  }

  /** The active version. */
  get active(): CompiledSignals {
    return this.snapshot.active;
  }

  /** The candidate loaded here, if any. */
  get candidate(): CompiledSignals | undefined {
    return this.snapshot.candidate;
  }

  /** {@link ServedSignals.forUser} on the current snapshot (what the scoring pipeline's signals stage reads). */
  forUser(userId: string): CompiledSignals {
    return this.snapshot.forUser(userId);
  }

  /** Swaps the active version (the candidate stays, unless it is the version now active). Returns whether it changed. */
  swap(active: CompiledSignals): boolean {
    const s = this.snapshot;
    if (s.active === active) return false;
    const keep = s.candidate !== undefined && s.candidate.version !== active.version;
    this.snapshot = new ServedSignals(active, keep ? s.candidate : undefined, keep ? s.split : undefined);
    return true;
  }

  /** Sets the candidate and its split (`split.candidate` must be its version); `undefined` ends it. */
  setCandidate(candidate: CompiledSignals | undefined, split: TrafficSplit | undefined): void {
    const s = this.snapshot;
    const next =
      candidate === undefined || split === undefined ? undefined : { ...split, candidate: candidate.version };
    const t = s.split;
    const same =
      s.candidate === (next === undefined ? undefined : candidate) &&
      t?.canaryPercent === next?.canaryPercent &&
      t?.shadowPercent === next?.shadowPercent;
    if (same) return;
    this.snapshot = new ServedSignals(s.active, next === undefined ? undefined : candidate, next);
  }
}
