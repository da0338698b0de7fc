/**
 * The lists of a backtest, as they were when each payment was decided. A candidate's `in_list("x", event.k)`
 * replays the membership the logged decision recorded for list `x` (its `lists`), so an entry added after the
 * payment is not credited to the candidate. A list the logged decision did not consult (new in the candidate)
 * is replayed with today's entries only when asked (`useCurrentLists`); otherwise the rules and offsets that
 * call `in_list` on it are left out of that record's replay (they count as not firing) and the report names
 * them. Records logged before memberships were (no `lists`) are replayed with today's entries, and counted.
 */
import type { ListMemberships } from '../decisioning/cel-environment';
import { compileRuleset, type CompiledRuleset } from '../decisioning/compile-ruleset';
import type { DecisionRecord } from './decision-record';
import { HASH_PREFIX, type KeyedHash } from '../platform/keyed-hash';

/** How the candidate's lists were replayed. */
export interface ListsReport {
  /** Replayed records logged before memberships were (their lists replayed with today's entries). */
  readonly recordsWithoutMemberships: number;
  /** Lists replayed with today's entries for at least one record, by name. */
  readonly currentEntries: readonly string[];
  /**
   * Lists the logged decisions did not consult, not replayed (no `useCurrentLists`): the rules and offsets
   * left out of the replay of those records, and how many records.
   */
  readonly notReplayed: readonly {
    readonly list: string;
    readonly rules: readonly string[];
    readonly records: number;
  }[];
}

/** Today's entries, and whether to use them for lists the logged decisions did not consult. */
export interface CurrentLists {
  /**
   * List entries by list name: raw values, hashed here when the list's key field is hashed in the log, or values
   * already hashed with the log's key (`h_…`), kept as they are.
   */
  readonly lists?: Readonly<Record<string, readonly string[]>>;
  readonly hash?: KeyedHash;
  /** Replay lists the logged decision did not consult with today's entries (default: leave their rules out). */
  readonly useCurrentLists?: boolean;
}

const escapeRegExp = (s: string): string => s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');

/** Picks, for each record, the memberships to replay and the candidate's rules that can be replayed with them. */
export class ListReplay {
  private readonly entrySets = new Map<string, ReadonlySet<string>>();
  private readonly variants = new Map<string, CompiledRuleset>();
  private readonly current = new Set<string>();
  private readonly left = new Map<string, { rules: readonly string[]; records: number }>();
  private withoutMemberships = 0;

  constructor(
    private readonly ruleset: CompiledRuleset,
    private readonly source: CurrentLists,
  ) {}

  /**
   * The memberships to replay `r` with, and the ruleset: the candidate, or the candidate without its rules on
   * lists `r`'s decision did not consult (unless `useCurrentLists`).
   */
  forRecord(r: DecisionRecord): { ruleset: CompiledRuleset; lists: ListMemberships } {
    const lists = new Map<string, boolean>();
    const uses = this.ruleset.listsUsed;
    if (uses.length === 0) return { ruleset: this.ruleset, lists };
    const recorded = r.lists;
    if (recorded === undefined) this.withoutMemberships++;
    const missing: string[] = [];
    for (const u of uses) {
      const was = recorded !== undefined && Object.hasOwn(recorded, u.name) ? recorded[u.name] : undefined;
      if (typeof was === 'boolean') lists.set(u.name, was);
      else if (recorded !== undefined && this.source.useCurrentLists !== true) missing.push(u.name);
      else {
        this.current.add(u.name);
        const v = r.event[u.key];
        lists.set(u.name, typeof v === 'string' && this.entries(u.name, r.hashed.includes(u.key)).has(v));
      }
    }
    return { ruleset: missing.length === 0 ? this.ruleset : this.withoutReadersOf(missing), lists };
  }

  /** The report so far. */
  report(): ListsReport {
    return {
      recordsWithoutMemberships: this.withoutMemberships,
      currentEntries: [...this.current].sort(),
      notReplayed: [...this.left]
        .sort((a, b) => (a[0] < b[0] ? -1 : 1))
        .map(([list, e]) => ({ list, rules: e.rules, records: e.records })),
    };
  }

  private entries(name: string, hashed: boolean): ReadonlySet<string> {
    const key = `${name}|${hashed}`;
    let s = this.entrySets.get(key);
    if (s === undefined) {
      const raw = this.source.lists?.[name] ?? [];
      // an entry already in hashed form (`h_…`, e.g. exported from the log's side) is kept as it is
      const h = this.source.hash;
      s = new Set(hashed && h !== undefined ? raw.map((v) => (v.startsWith(HASH_PREFIX) ? v : h.of(v))) : raw);
      this.entrySets.set(key, s);
    }
    return s;
  }

  /** The candidate without the rules and offsets that call `in_list` on any of `lists` (compiled once per set). */
  private withoutReadersOf(lists: readonly string[]): CompiledRuleset {
    for (const name of lists) {
      let e = this.left.get(name);
      if (e === undefined) this.left.set(name, (e = { rules: this.readers([name]), records: 0 }));
      e.records++;
    }
    const key = lists.join('\u0000');
    let rs = this.variants.get(key);
    if (rs === undefined) {
      const doc = this.ruleset.document;
      const skip = new Set(this.readers(lists));
      rs = compileRuleset({
        ...doc,
        rules: doc.rules.filter((x) => !skip.has(x.id)),
        offsets: doc.offsets.filter((x) => !skip.has(x.id)),
        golden: [],
      });
      this.variants.set(key, rs);
    }
    return rs;
  }

  /** Ids of the rules and offsets whose expression calls `in_list` on one of `lists` (its name is a literal). */
  private readers(lists: readonly string[]): string[] {
    const calls = new RegExp(`\\bin_list\\s*\\(\\s*(["'])(?:${lists.map(escapeRegExp).join('|')})\\1`);
    const doc = this.ruleset.document;
    return [...doc.rules, ...doc.offsets].filter((x) => calls.test(x.when)).map((x) => x.id);
  }
}
