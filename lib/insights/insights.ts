/**
 * What the console shows beside the queue (docs/console.md): each rule's hits, precision and recall over the last
 * days; the PSI of each feature and of the score over time; what serves now. Read from the decision log and the
 * labels (bounded: at most `maxRecords` decisions a window, newest first), each answer kept `ttlMs` and computed
 * once for concurrent callers. Who asks must be an analyst or a lead, as on the case API.
 */
import { LRUCache } from 'lru-cache';
import { SingleFlight } from '../context/single-flight';
import { AppError } from '../errors/errors';
import type { Identity } from '../identity/identity';
import { labelsByTransaction, readDecisions, resolveLabel } from '../learning/decision-reader';
import type { DriftReference } from '../learning/drift-bins';
import { PSI_ALERT } from '../learning/drift-bins';
import { driftHistory, type DriftPoint } from '../learning/drift-history';
import { DRIFT_MIN_SAMPLES } from '../learning/drift-monitor';
import type { StoredLabel } from '../learning/labels';
import type { LearningStore } from '../learning/learning-store';
import { ruleStats, type RuleStats } from '../learning/rule-stats';

const DAY_MS = 86_400_000;

/** What the rules page shows. */
export interface RulesInsight extends RuleStats {
  readonly from: string;
  readonly to: string;
  /** The window held more decisions than are read (`maxRecords`): the figures cover the newest ones. */
  readonly truncated: boolean;
}

/** What the drift page shows. */
export interface DriftInsight {
  readonly from: string;
  readonly to: string;
  readonly bucket: 'hour' | 'day';
  /** The serving model's version and the PSI alert threshold. */
  readonly model?: { readonly name: string; readonly version: string };
  readonly threshold: number;
  /** The fewest scored payments a bucket needs for a PSI (below it, the bucket's values are `null`). */
  readonly minSamples: number;
  /** Every feature the manifest bins, in order. */
  readonly features: readonly string[];
  readonly points: readonly DriftPoint[];
  readonly truncated: boolean;
  /** Why there is no history (no model, no drift bins in its manifest). */
  readonly note?: string;
}

/** The model a drift history is computed for. */
export interface DriftModel {
  readonly name: string;
  readonly version: string;
  readonly drift?: DriftReference;
}

/** What an {@link Insights} reads. */
export interface InsightsParts {
  readonly identity: Identity;
  /** The decision log and labels (`undefined`: nothing is recorded, every window is empty). */
  readonly store: LearningStore | undefined;
  /** Wall clock, ms. */
  readonly wallClock: () => number;
  /** Monotonic clock, ms (how long an answer is kept). */
  readonly monotonic: () => number;
  /** The model serving now. */
  readonly model: () => DriftModel | undefined;
  /** The rule ids of the ruleset serving now (reported even with no hit). */
  readonly ruleIds: () => readonly string[];
  /** The ruleset serving on this instance (a new draft starts from its document). */
  readonly ruleset: () => { readonly name: string; readonly version: string; readonly document: unknown } | undefined;
  /** Model and ruleset versions, canaries and shadows (the admin status). */
  readonly serving: () => Promise<unknown>;
  /** Decisions read per window at most. */
  readonly maxRecords: number;
  /** How long an answer is kept, ms. */
  readonly ttlMs: number;
}

type Headers = { get(name: string): string | null };
type Query = { get(name: string): string | null };

/** Parses `days` (1–30, default 7). @throws AppError `validation_failed` naming `days`. */
export function parseDays(q: Query): number {
  const raw = q.get('days');
  if (raw === null || raw === '') return 7;
  const n = Number(raw);
  if (!Number.isInteger(n) || n < 1 || n > 30)
    throw new AppError('validation_failed', 'The query is invalid.', {
      errors: [{ path: 'days', message: 'must be a whole number of days from 1 to 30' }],
    });
  return n;
}

/** The console's read-only views over the decision log, the labels and the rollout. */
export class Insights {
  private readonly cache: LRUCache<string, RulesInsight | DriftInsight>;

  constructor(private readonly p: InsightsParts) {
    // the cache's clock is the injected one (`monotonic`), so a test moves time instead of waiting
    this.cache = new LRUCache<string, RulesInsight | DriftInsight>({
      max: 64,
      ttl: p.ttlMs,
      ttlResolution: 0,
      perf: { now: p.monotonic },
    });
  }

  /** `GET /api/insights/rules?days=`. @throws AppError as the identity's `require`; `validation_failed`. */
  async rules(headers: Headers, query: Query): Promise<RulesInsight> {
    this.p.identity.require(headers, ['analyst', 'lead']);
    const days = parseDays(query);
    return this.cached(`rules:${days}`, async () => {
      const { from, to, records, truncated } = await this.window(days);
      const labels =
        this.p.store === undefined ? new Map<string, StoredLabel[]>() : await labelsByTransaction(this.p.store);
      const labelOf = (tx: string): 0 | 1 | undefined => {
        const l = labels.get(tx);
        return l === undefined ? undefined : resolveLabel(l.map((x) => x.label));
      };
      return { from, to, truncated, ...ruleStats(records, labelOf, this.p.ruleIds()) };
    }) as Promise<RulesInsight>;
  }

  /** `GET /api/insights/drift?days=`: hourly buckets up to 2 days, daily beyond. */
  async drift(headers: Headers, query: Query): Promise<DriftInsight> {
    this.p.identity.require(headers, ['analyst', 'lead']);
    const days = parseDays(query);
    const model = this.p.model();
    return this.cached(`drift:${days}:${model?.version ?? ''}`, async () => {
      const { from, to, records, truncated, fromMs, toMs } = await this.window(days);
      const bucket = days <= 2 ? 'hour' : 'day';
      const base = { from, to, bucket, threshold: PSI_ALERT, minSamples: DRIFT_MIN_SAMPLES, truncated } as const;
      if (model === undefined) return { ...base, features: [], points: [], note: 'No model is serving.' };
      const m = { name: model.name, version: model.version };
      if (model.drift === undefined)
        return { ...base, model: m, features: [], points: [], note: 'This model version has no drift bins.' };
      const bucketMs = bucket === 'hour' ? 3_600_000 : DAY_MS;
      const points = driftHistory(records, model.version, model.drift, { fromMs, toMs, bucketMs });
      return { ...base, model: m, features: model.drift.features.map((f) => f.name), points };
    }) as Promise<DriftInsight>;
  }

  /** `GET /api/insights/serving`: the models', rulesets' and signals' rollout status views. */
  async serving(headers: Headers): Promise<unknown> {
    this.p.identity.require(headers, ['analyst', 'lead']);
    return this.p.serving();
  }

  /** `GET /api/insights/ruleset`: the serving ruleset's name, version and document. @throws AppError `not_found` without one. */
  async ruleset(headers: Headers): Promise<{ name: string; version: string; document: unknown }> {
    this.p.identity.require(headers, ['analyst', 'lead']);
    const rs = this.p.ruleset();
    if (rs === undefined) throw new AppError('not_found', 'No ruleset is serving (RULESET_NAME=none).');
    return { ...rs };
  }

  /** The last `days` days, ending at the next whole hour, so that answers within the hour share a window. */
  private async window(days: number) {
    const toMs = Math.ceil(this.p.wallClock() / 3_600_000) * 3_600_000;
    const fromMs = toMs - days * DAY_MS;
    const records =
      this.p.store === undefined ? [] : await readDecisions(this.p.store, fromMs, toMs, this.p.maxRecords);
    return {
      fromMs,
      toMs,
      from: new Date(fromMs).toISOString(),
      to: new Date(toMs).toISOString(),
      records,
      truncated: records.length >= this.p.maxRecords,
    };
  }

  /** One computation per key at a time, kept `ttlMs`; a failure is not kept. */
  private async cached<T extends RulesInsight | DriftInsight>(key: string, compute: () => Promise<T>): Promise<T> {
    const hit = this.cache.get(key);
    if (hit !== undefined) return hit as T;
    return (await this.flights.run(key, async () => {
      const v = await compute();
      this.cache.set(key, v);
      return v;
    })) as T;
  }

  private readonly flights = new SingleFlight<RulesInsight | DriftInsight>();
}
