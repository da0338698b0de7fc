/**
 * Decisioning on one instance: the active ruleset (swapped atomically), an optional candidate (deciding
 * for its canary share of users, evaluated off the decision for its shadow share of payments), list
 * membership (prefetched before evaluation, behind L1) and the lists admin operations. The scorer calls
 * {@link Decisioning.prepare} beside the context lookup and {@link Decisioning.decide} after inference.
 */
import { AppError } from '../errors/errors';
import type { ListMemberships } from './cel-environment';
import type { CompiledRuleset } from './compile-ruleset';
import { evaluateRuleset, type DecisionInput, type DecisionOutcome, type RuleDecision } from './evaluate-ruleset';
import type { ListLookup } from './list-lookup';
import type { RulesetTraffic } from './ruleset-traffic';
import { inRulesetCanary, inRulesetShadow } from './ruleset-traffic';
import { MAX_PAGE, type ListPage } from './list-store';
import { decodeListCursor, encodeListCursor, listValueProblem, parseAddBody } from './list-values';
import type { ListKeyField } from './ruleset-schema';

/**
 * The ruleset that decides one event (the candidate for a canary user, else the active one) and the
 * memberships prefetched for it (a swap in between does not mix them).
 */
export interface Prepared {
  readonly ruleset: CompiledRuleset;
  readonly lists: ListMemberships;
  readonly shadow?: { readonly ruleset: CompiledRuleset; readonly lists: ListMemberships };
}

/** A decision with the ruleset that made it. */
export interface RulesetDecision extends DecisionOutcome {
  readonly ruleset: { readonly name: string; readonly version: string };
  /**
   * The memberships this decision used: for each list the deciding ruleset consulted, whether the event's key
   * value was on it (from the prefetch; lists the store could not answer are left out). The decision log keeps
   * them so a backtest replays lists as they were.
   */
  readonly lists: Readonly<Record<string, boolean>>;
}

/** How a shadow ruleset would have changed decisions: counts by `from→to` (e.g. `approve→review`). */
export interface ShadowReport {
  readonly active: string;
  readonly candidate: string;
  readonly evaluated: number;
  readonly changed: number;
  readonly byDirection: Readonly<Record<string, number>>;
}

/** Events of {@link Decisioning}. */
export interface DecisioningEvents {
  /** An expression failed at run time (the decision failed closed to review). Rule ids only. */
  ruleErrors(e: { readonly ruleset: string; readonly version: string; readonly ruleIds: readonly string[] }): void;
  /** The active ruleset changed on this instance. */
  swapped(e: { readonly name: string; readonly from: string | undefined; readonly to: string }): void;
  /** The candidate or its shares changed on this instance (`undefined`: no candidate). */
  trafficChanged(e: RulesetTraffic | undefined): void;
}

/** Decisioning state of one instance. */
export class Decisioning {
  private active: CompiledRuleset | undefined;
  private candidateRs: CompiledRuleset | undefined;
  private split: RulesetTraffic | undefined;
  private shadowStats: { evaluated: number; changed: number; byDirection: Record<string, number> } | undefined;

  constructor(
    readonly lookup: ListLookup,
    initial: CompiledRuleset | undefined,
    private readonly on: Partial<DecisioningEvents> = {},
  ) {
    this.active = initial;
  }

  /** The active ruleset, if any. */
  get ruleset(): CompiledRuleset | undefined {
    return this.active;
  }

  /** Makes `rs` the active ruleset (atomic: one reference; in-flight evaluations keep theirs). */
  swap(rs: CompiledRuleset): void {
    const from = this.active?.version;
    this.active = rs;
    if (from !== rs.version || this.active.name !== rs.name) this.on.swapped?.({ name: rs.name, from, to: rs.version });
  }

  /** The candidate ruleset in force here, if any (its split: {@link traffic}). */
  get candidate(): CompiledRuleset | undefined {
    return this.candidateRs;
  }

  /** The candidate's split in force here (`undefined`: the active ruleset decides every payment). */
  get traffic(): RulesetTraffic | undefined {
    return this.split;
  }

  /**
   * Sets the candidate `rs` and its shares (`split.candidate` must be `rs.version`); `undefined` ends it.
   * The shadow counts restart when the candidate changes.
   */
  setCandidate(rs: CompiledRuleset | undefined, split: RulesetTraffic | undefined): void {
    const next = rs === undefined || split === undefined ? undefined : { ...split, candidate: rs.version };
    const prev = this.split;
    if (this.candidateRs !== rs) this.shadowStats = undefined;
    this.candidateRs = next === undefined ? undefined : rs;
    this.split = next;
    if (next !== undefined) this.shadowStats ??= { evaluated: 0, changed: 0, byDirection: {} };
    const same =
      prev?.candidate === next?.candidate &&
      prev?.canaryPercent === next?.canaryPercent &&
      prev?.shadowPercent === next?.shadowPercent;
    if (!same) this.on.trafficChanged?.(next);
  }

  /** What the candidate would have changed so far, over the payments it shadowed. */
  shadowReport(): ShadowReport | undefined {
    const s = this.shadowStats;
    if (s === undefined || this.candidateRs === undefined || this.active === undefined) return undefined;
    return {
      active: this.active.version,
      candidate: this.candidateRs.version,
      ...s,
      byDirection: { ...s.byDirection },
    };
  }

  /** The version that decides for `userId` now: the candidate's within its canary share, else the active one. */
  versionFor(userId: string): string | undefined {
    const c = this.candidateRs;
    const s = this.split;
    return c !== undefined && s !== undefined && inRulesetCanary(userId, s.canaryPercent)
      ? c.version
      : this.active?.version;
  }

  /**
   * Picks the ruleset that decides `event` (the candidate for a user in its canary share), and the candidate
   * in shadow for its share of the other payments; prefetches the list memberships they need (one store
   * round trip at most).
   */
  async prepare(event: Readonly<Record<string, unknown>>): Promise<Prepared | undefined> {
    const active = this.active;
    if (active === undefined) return undefined;
    const c = this.candidateRs;
    const s = this.split;
    const canary = c !== undefined && s !== undefined && inRulesetCanary(String(event['userId']), s.canaryPercent);
    const rs = canary ? c : active;
    const shadow =
      !canary && c !== undefined && s !== undefined && inRulesetShadow(String(event['transactionId']), s.shadowPercent)
        ? c
        : undefined;
    const uses = shadow === undefined ? rs.listsUsed : [...rs.listsUsed, ...shadow.listsUsed];
    const lists = uses.length === 0 ? new Map<string, boolean>() : await this.lookup.memberships(uses, event);
    return shadow === undefined ? { ruleset: rs, lists } : { ruleset: rs, lists, shadow: { ruleset: shadow, lists } };
  }

  /** Evaluates the prepared ruleset (synchronous). */
  decide(p: Prepared, input: Omit<DecisionInput, 'lists'>): RulesetDecision {
    const out = evaluateRuleset(p.ruleset, { ...input, lists: p.lists });
    if (out.errors.length > 0)
      this.on.ruleErrors?.({
        ruleset: p.ruleset.name,
        version: p.ruleset.version,
        ruleIds: out.errors.map((e) => e.ruleId),
      });
    if (p.shadow !== undefined && this.shadowStats !== undefined && this.candidateRs === p.shadow.ruleset)
      this.countShadow(out.decision, evaluateRuleset(p.shadow.ruleset, { ...input, lists: p.shadow.lists }).decision);
    return { ...out, ruleset: { name: p.ruleset.name, version: p.ruleset.version }, lists: usedLists(p) };
  }

  private countShadow(active: RuleDecision, candidate: RuleDecision): void {
    const s = this.shadowStats as NonNullable<typeof this.shadowStats>;
    s.evaluated++;
    if (active === candidate) return;
    s.changed++;
    const k = `${active}→${candidate}`;
    s.byDirection[k] = (s.byDirection[k] ?? 0) + 1;
  }

  /** The key field (an event field) of a list the active ruleset declares. @throws AppError `not_found`. */
  listKey(name: string): ListKeyField {
    const key = this.active?.lists.get(name);
    if (key === undefined)
      throw new AppError('not_found', `The active ruleset declares no list "${name.slice(0, 64)}".`);
    return key;
  }

  /**
   * `POST /api/lists/{name}`: adds `{ values, ttlSeconds? }`.
   * @throws AppError `not_found` (undeclared list), `validation_failed` naming each bad value's index.
   */
  async addToList(name: string, body: unknown): Promise<{ name: string; added: number; ttlSeconds?: number }> {
    const { values, ttlSeconds } = parseAddBody(this.listKey(name), body);
    await this.lookup.store.add(name, values, ttlSeconds);
    return ttlSeconds === undefined ? { name, added: values.length } : { name, added: values.length, ttlSeconds };
  }

  /** `POST /api/lists/{name}/remove` `{ value }`. @throws AppError `not_found` (undeclared list or no such entry). */
  async removeFromList(name: string, value: string): Promise<{ name: string; removed: 1 }> {
    const problem = listValueProblem(this.listKey(name), value);
    if (problem !== undefined)
      throw new AppError('validation_failed', '1 invalid value.', { errors: [{ path: 'value', message: problem }] });
    if (!(await this.lookup.store.remove(name, value)))
      throw new AppError('not_found', `No such entry on list "${name}".`);
    return { name, removed: 1 };
  }

  /**
   * `GET /api/lists/{name}?cursor=`: one bounded page; its `cursor` is opaque.
   * @throws AppError `not_found`; `validation_failed` naming `cursor` for one this endpoint did not return.
   */
  async listPage(name: string, cursor: string | undefined): Promise<ListPage> {
    const page = await this.lookup.store.page(name, decodeListCursor(this.listKey(name), cursor), MAX_PAGE);
    return page.cursor === undefined ? page : { ...page, cursor: encodeListCursor(page.cursor) };
  }
}

/** The prefetched memberships of the lists the deciding ruleset consulted (not its shadow's). */
function usedLists(p: Prepared): Record<string, boolean> {
  const out: Record<string, boolean> = {};
  for (const u of p.ruleset.listsUsed) {
    const member = p.lists.get(u.name);
    if (member !== undefined) out[u.name] = member;
  }
  return out;
}
