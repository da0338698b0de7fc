import type { Insights } from './console/insights';
import type { Drafts } from './governance/drafts';
import type { ArtifactAdmin } from './http/admin-routes';
import { describeOutcome } from './pointer/upload-pipeline';
import type { Admission, Arrival, EngineAdmissionStats } from './admission/admission';
import type { AsyncScorer, MessageMeta, MessageOutcome, QueueMessage } from './async/async-scorer';
import type { Config } from './config/config';
import type { ContextProvider } from './context/context-provider';
import { batchDeadlineMs } from './inference/deadline';
import type { ReadinessMonitor } from './inference/readiness-monitor';
import {
  currentReadiness,
  healthDetail,
  publicReadiness,
  type EngineReadiness,
  type HealthDetail,
  type PublicReadiness,
} from './inference/readiness-views';
import type { SessionManager } from './inference/session-manager';
import type { LabelsAdded } from './learning/labels';
import type { Learning } from './learning/learning';
import type { Cases } from './cases/create-cases';
import type { IntakeMessage, RejectedCase } from './cases/case-intake';
import type { Governance } from './governance/governance';
import { requireService, type Webhooks } from './webhooks/create-webhooks';
import type { WebhookService } from './webhooks/webhook-service';
import type { CaseService } from './cases/case-service';
import type { ModelRollout } from './rollout/model-rollout';
import type { Decisioning } from './decisioning/decisioning';
import type { DecisioningParts } from './decisioning/create-decisioning';
import type { RulesetRollout } from './decisioning/ruleset-rollout';
import type { SignalsParts } from './signals/create-signals';
import type { SignalsRollout } from './signals/signals-rollout';
import type { SignalsServing } from './signals/signals-serving';
import type { InferResponse, OipService } from './oip/oip-service';
import { AppError } from './errors/errors';
import { batchItems, sortBatch, type BatchItemResult } from './scoring/batch-body';
import { parsePaymentEvent } from './domain/payment-event';
import type { ScoreOptions, ScoreResult, Scorer } from './scoring/scorer';
import type { Logger } from './platform/logger';
import type { ScoringPath, Telemetry } from './telemetry/telemetry';

/** The parts an {@link Engine} is made of (built by the composition root, `lib/app.ts`). */
export interface EngineParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly sessions: SessionManager;
  readonly context: ContextProvider;
  readonly scorer: Scorer;
  /** Asynchronous (Service Bus) scoring, exactly once per transaction. */
  readonly asyncScorer: AsyncScorer;
  /** Model rollout (blob uploads, fleet pointer, canary/shadow, admin API). */
  readonly rollout?: ModelRollout;
  /** Rules, lists and merchant profiles, and ruleset rollout (absent with `RULESET_NAME=none`). */
  readonly decisioning?: DecisioningParts;
  /** The signals served (aggregates and features as data) and their rollout. */
  readonly signals?: SignalsParts;
  /** The Open Inference Protocol (KServe V2) over the managed models. */
  readonly oip?: OipService;
  /** Metrics and spans; every scored payment is counted by path, decision and cache. */
  readonly telemetry?: Telemetry;
  /** Admission by deadline, with a memory ceiling (HTTP and Service Bus share it); default: admit everything. */
  readonly admission?: Admission;
  /** Monotonic clock, ms, for `scoring.request.duration`. Default `performance.now`. */
  readonly now?: () => number;
  /** Keeps readiness fresh with a background sample inference (started by the composition root). */
  readonly readinessMonitor?: ReadinessMonitor;
  /** The learning loop: decision log, labels, drift (also listed in `disposables`). */
  readonly learning?: Learning;
  /** The review cases: writer and API (also listed in `disposables`). */
  readonly cases?: Cases;
  /** The audit trail (lib/governance). */
  readonly governance?: Governance;
  /** The case events' webhooks: API and relay (also listed in `disposables`). */
  readonly webhooks?: Webhooks;
  /** The console's views (rules, drift, serving). */
  readonly insights?: Insights;
  /** Drafts of the served ruleset, their backtest and approval (absent without a ruleset or a case database). */
  readonly drafts?: Drafts;
  /** Extra resources to dispose with the engine, last first. */
  readonly disposables?: readonly { dispose(): Promise<void> }[];
}

/**
 * The engine every trigger shares: one per process. Its methods are the entry points the function
 * adapters call; each validates its input and returns plain results or throws `AppError`s.
 */
export class Engine {
  constructor(private readonly parts: EngineParts) {}

  get config(): Config {
    return this.parts.config;
  }
  get logger(): Logger {
    return this.parts.logger;
  }
  get sessions(): SessionManager {
    return this.parts.sessions;
  }
  /**
   * Model rollout: `handleUpload` (blob trigger), `status` / `promote` / `rollback` / `traffic` (admin API).
   * @throws AppError `internal` if the engine was built without it.
   */
  get models(): ModelRollout {
    if (this.parts.rollout === undefined) throw new AppError('internal', 'Model rollout is not configured.');
    return this.parts.rollout;
  }

  /**
   * The lists admin operations (`/api/lists/...`) on the active ruleset's lists.
   * @throws AppError `not_found` when no ruleset is configured (no list is declared).
   */
  get lists(): Decisioning {
    if (this.parts.decisioning === undefined) throw new AppError('not_found', 'No ruleset is configured: no lists.');
    return this.parts.decisioning.decisioning;
  }

  /**
   * Ruleset rollout: `handleUpload` (blob trigger), `status` / `promote` / `rollback` / `traffic` (admin API).
   * @throws AppError `not_found` when no ruleset is configured.
   */
  get rulesets(): RulesetRollout {
    if (this.parts.decisioning === undefined) throw new AppError('not_found', 'No ruleset is configured.');
    return this.parts.decisioning.rollout;
  }

  /**
   * The ruleset admin routes' operations: the rollout's, with the four-eyes rule when drafts are on (a version
   * whose draft is not approved is never promoted, canaried or shadowed).
   * @throws AppError `not_found` when no ruleset is configured.
   */
  get rulesetAdmin(): ArtifactAdmin {
    const rollout = this.rulesets;
    return this.parts.drafts === undefined ? rollout : this.parts.drafts.gate(rollout);
  }

  /**
   * The ruleset blob trigger: published through the rollout, or, with `RULESET_DIRECT_ROLLOUT=false`, kept as a
   * draft; either way audited (actor `blob-upload`). Returns the line to log (`warn` for a refusal).
   * @throws transient AppErrors only (retried), and `dependency_unavailable` when its audit entry cannot be recorded.
   */
  async rulesetUpload(blobPath: string, bytes: Uint8Array | undefined): Promise<{ warn: boolean; text: string }> {
    const drafts = this.parts.drafts;
    if (drafts !== undefined && !this.parts.config.decisioning.directRollout) return drafts.upload(blobPath, bytes);
    const outcome = await this.rulesets.handleUpload(bytes === undefined ? { blobPath } : { blobPath, bytes });
    await this.parts.governance?.audit.upload('ruleset', outcome); // throws (retried) when it cannot be recorded
    return describeOutcome('ruleset', outcome);
  }

  /**
   * Signals rollout: `handleUpload` (blob trigger), `status` / `promote` / `rollback` / `traffic` (admin API).
   * @throws AppError `internal` if the engine was built without it.
   */
  get signals(): SignalsRollout {
    if (this.parts.signals === undefined) throw new AppError('internal', 'The signals rollout is not configured.');
    return this.parts.signals.rollout;
  }

  /**
   * What the scoring pipeline reads of the signals: the versions served here, swapped atomically.
   * @throws AppError `internal` if the engine was built without it.
   */
  get signalsServing(): SignalsServing {
    if (this.parts.signals === undefined) throw new AppError('internal', 'The signals rollout is not configured.');
    return this.parts.signals.serving;
  }

  /**
   * The signals blob trigger: published through the rollout, and audited (actor `blob-upload`). Returns the line to
   * log (`warn` for a refusal).
   * @throws transient AppErrors only (retried), and `dependency_unavailable` when its audit entry cannot be recorded.
   */
  async signalsUpload(blobPath: string, bytes: Uint8Array | undefined): Promise<{ warn: boolean; text: string }> {
    const outcome = await this.signals.handleUpload(bytes === undefined ? { blobPath } : { blobPath, bytes });
    await this.parts.governance?.audit.upload('signals', outcome); // throws (retried) when it cannot be recorded
    return describeOutcome('signals', outcome);
  }

  /**
   * Drafts of the served ruleset (`/api/rulesets/{name}/drafts…`).
   * @throws AppError `not_found` without a ruleset or a case database (`CASE_STORE=none`).
   */
  get drafts(): Drafts {
    const d = this.parts.drafts;
    if (d === undefined)
      throw new AppError('not_found', 'Ruleset drafts need a ruleset and a case database (CASE_STORE).');
    return d;
  }

  /**
   * The Open Inference Protocol endpoints' operations (`v2/...`).
   * @throws AppError `internal` if the engine was built without them.
   */
  get oip(): OipService {
    if (this.parts.oip === undefined) throw new AppError('internal', 'The inference protocol is not configured.');
    return this.parts.oip;
  }

  /** The admission's counters (`undefined` without admission). */
  get admissionStats(): EngineAdmissionStats | undefined {
    return this.parts.admission?.stats;
  }

  /**
   * Now on the admission's clock, ms: an adapter reads it as the invocation reaches the app, before the body
   * is read, and passes it as `arrivedAt`; the request's deadline starts there.
   */
  arrival(): number {
    return this.parts.admission?.clock() ?? this.parts.now?.() ?? performance.now();
  }

  /**
   * Runs `fn` as one admitted request with a deadline of `deadlineMs` from `arrivedAt` (default now)
   * (`lib/admission/admission.ts`). {@link score}, {@link scoreBatch} and {@link infer} admit their valid
   * work with it, after validation.
   * @throws AppError `overloaded` (503 + `Retry-After` from the backlog) when the request cannot finish
   *   within its deadline, or the memory ceiling is full; `fn` then never runs.
   */
  admit<T>(deadlineMs: number, fn: (arrival: Arrival) => Promise<T>, arrivedAt?: number): Promise<T> {
    const admission = this.parts.admission;
    if (admission !== undefined) return admission.run(deadlineMs, fn, arrivedAt);
    const at = arrivedAt ?? this.arrival();
    return fn({ at, deadlineAt: at + deadlineMs });
  }

  /**
   * Like {@link admit}, for work without a deadline that can wait (a Service Bus delivery of `weight`
   * messages): when the ceiling is full it waits up to `ADMISSION_QUEUE_WAIT_MS` for a freed slot instead of
   * being refused at once, because a refused delivery goes back to the queue and counts a delivery attempt
   * toward the dead-letter limit.
   * @throws AppError `overloaded` (transient) when no slot frees in time; `fn` then never runs.
   */
  admitWaiting<T>(weight: number, fn: () => Promise<T>): Promise<T> {
    const admission = this.parts.admission;
    return admission === undefined ? fn() : admission.runWaiting(weight, fn);
  }

  /**
   * Stores a `POST /api/labels` body `{ "labels": [...] }` (at most 1000); a label already stored for the same
   * (transactionId, label) changes nothing.
   * @throws AppError `validation_failed` naming every bad field, `payload_too_large`, `dependency_unavailable`.
   */
  addLabels(body: unknown): Promise<LabelsAdded> {
    if (this.parts.learning === undefined)
      return Promise.reject(new AppError('internal', 'The learning loop is not configured.'));
    return this.parts.learning.addLabels(body);
  }

  /**
   * The governance of changes: the audit trail (`GET /api/audit`, the audited admin paths).
   * @throws AppError `not_found` when not configured.
   */
  get governance(): Governance {
    if (this.parts.governance === undefined) throw new AppError('not_found', 'Governance is not configured.');
    return this.parts.governance;
  }

  /**
   * The webhook API (`/api/webhooks`; docs/webhooks.md).
   * @throws AppError `not_found` without a case database (`CASE_STORE=none`).
   */
  get webhooks(): WebhookService {
    return requireService(this.parts.webhooks);
  }

  /**
   * The case API's operations (`/api/cases`, `/api/me`).
   * @throws AppError `not_found` when no case store is configured (`CASE_STORE=none`).
   */
  get cases(): CaseService {
    const s = this.parts.cases?.service;
    if (s === undefined) throw new AppError('not_found', 'The case queue is not configured (CASE_STORE=none).');
    return s;
  }

  /**
   * Writes a delivery batch of the case intake queue to the case store (the `caseIntake` function).
   * @throws AppError `not_found` with `CASE_STORE=none`; `dependency_unavailable` (after a backoff wait) while the
   *   database is unavailable, so the queue redelivers the batch.
   */
  intakeCases(
    messages: readonly IntakeMessage[],
  ): Promise<{ readonly opened: number; readonly rejected: RejectedCase[] }> {
    const c = this.parts.cases;
    if (c === undefined) throw new AppError('not_found', 'The case queue is not configured (CASE_STORE=none).');
    return c.intake(messages);
  }

  /** The console's views: rules, drift, what serves. @throws AppError `not_found` when the engine has none. */
  get insights(): Insights {
    const i = this.parts.insights;
    if (i === undefined) throw new AppError('not_found', 'The console views are not configured.');
    return i;
  }

  /** The learning loop (decision log stats, drift readings); `undefined` if the engine was built without it. */
  get learning(): Learning | undefined {
    return this.parts.learning;
  }

  /** Loads and warms the model (single-flight), then follows the model pointer once. Logs the outcome; rethrows a failure. */
  async start(): Promise<void> {
    await this.parts.sessions.ensureReady();
    await this.parts.rollout?.converge(); // readiness waits until the pointer has been read
  }

  /**
   * Validates one payment event (the `POST /api/score` body), then admits it ({@link admit}, deadline
   * `options.deadlineMs` from `options.arrivedAt`, default `REQUEST_DEADLINE_MS` from now) and scores it:
   * a bad body is answered `validation_failed` however loaded the instance is.
   * @throws AppError `validation_failed` naming every invalid field, `model_not_ready`, `overloaded`, ...
   */
  async score(body: unknown, options: ScoreOptions = {}): Promise<ScoreResult> {
    return this.measured('http', async () => {
      const event = this.validate(() => parsePaymentEvent(body));
      const deadlineMs = options.deadlineMs ?? this.parts.config.inference.deadlineMs;
      return this.admit(
        deadlineMs,
        async ({ at }) => {
          await this.parts.sessions.ensureReady();
          return this.observe('http', await this.parts.scorer.score(event, { ...options, deadlineMs, arrivedAt: at }));
        },
        options.arrivedAt,
      );
    });
  }

  /**
   * Runs an Open Inference Protocol request (`POST /api/v2/models/{name}[/versions/{version}]/infer`): the
   * body is validated against the model first, then admitted as {@link score} is.
   * @throws AppError as {@link OipService.infer} does.
   */
  infer(name: string, version: string | undefined, body: unknown, options: ScoreOptions = {}): Promise<InferResponse> {
    const deadlineMs = options.deadlineMs ?? this.parts.config.inference.deadlineMs;
    return this.oip.infer(name, version, body, {
      deadlineMs,
      admit: (run) => this.admit(deadlineMs, ({ at }) => run(at), options.arrivedAt),
    });
  }

  private observe<R extends ScoreResult>(path: ScoringPath, r: R): R {
    this.parts.telemetry?.scored({
      path,
      decision: r.decision,
      cache: r.cache,
      modelVersion: r.model.version,
      score: r.score ?? undefined,
      inferenceMs: r.timing.inferenceMs,
    });
    return r;
  }

  /** Runs parsing (synchronous) in the `validate` span when tracing is on. */
  private validate<T>(parse: () => T): T {
    const tracer = this.parts.telemetry?.tracer;
    return tracer?.enabled === true ? tracer.spanSync('validate', {}, parse) : parse();
  }

  /** Records `scoring.request.duration` (outcome `ok`, `rejected` or the error code) around one request. */
  private async measured<T>(
    path: ScoringPath,
    fn: () => Promise<T>,
    outcome: (r: T) => string = () => 'ok',
  ): Promise<T> {
    const t = this.parts.telemetry;
    if (t === undefined) return fn();
    const now = this.parts.now ?? (() => performance.now());
    const t0 = now();
    try {
      const r = await fn();
      t.request({ path, outcome: outcome(r), ms: now() - t0 });
      return r;
    } catch (err) {
      t.request({ path, outcome: (err as { code?: string }).code ?? 'error', ms: now() - t0 });
      throw err;
    }
  }

  /**
   * Validates and scores a batch (the `POST /api/score/batch` body `{ "events": [...] }`, at most
   * `BATCH_MAX_EVENTS` events). Invalid events each get their own problem and do not fail the batch;
   * the valid ones are admitted as one request ({@link admit}, after validation) and scored in one
   * inference call. Without `options.deadlineMs`, the deadline scales with the valid events
   * ({@link batchDeadlineMs}); it starts at `options.arrivedAt` (default now).
   * @returns `{ results }`: one entry per event, in order.
   * @throws AppError `validation_failed` (not `{ events: [...] }`, or empty), `payload_too_large` (too many events), `overloaded`, `deadline_exceeded`, ...
   */
  scoreBatch(body: unknown, options?: ScoreOptions): Promise<{ results: BatchItemResult[] }> {
    return this.measured('batch', () => this.scoreItems(body, options));
  }

  private async scoreItems(body: unknown, options?: ScoreOptions): Promise<{ results: BatchItemResult[] }> {
    const items = batchItems(body, this.parts.config.http.batchMaxEvents);
    const { results, valid, at } = this.validate(() => sortBatch(items));
    if (valid.length > 0) {
      const deadlineMs = options?.deadlineMs ?? batchDeadlineMs(valid.length, this.parts.config.inference);
      const run = async ({ at: arrivedAt }: Arrival): Promise<void> => {
        await this.parts.sessions.ensureReady();
        const scored = await this.parts.scorer.scoreBatch(valid, { ...options, deadlineMs, arrivedAt });
        scored.forEach((r, k) => (results[at[k] as number] = this.observe('batch', r)));
      };
      await this.admit(deadlineMs, run, options?.arrivedAt);
    }
    return { results };
  }

  /**
   * Processes one Service Bus message: scores it once per transaction (redeliveries re-publish the stored
   * result), or returns a rejection for a message that can never be scored. Shares the HTTP admission
   * gate: a message refused there is not touched (not parsed, not stored) and the `overloaded` error
   * (transient) sends it back to the queue for redelivery.
   * @throws transient errors only (the message is then redelivered).
   */
  async processMessage(message: unknown, meta: MessageMeta): Promise<MessageOutcome> {
    const [outcome] = await this.processMessages([{ body: message, meta }]);
    return outcome as MessageOutcome;
  }

  /**
   * Processes a Service Bus delivery batch (`cardinality: 'many'`) with one store pipeline per step and one
   * inference call: one outcome per message, in order, each with the guarantees of {@link processMessage}.
   * The batch passes the admission gate as one request: refused there, nothing is touched and the
   * `overloaded` error (transient) sends the whole batch back to the queue.
   * @throws transient errors only, for the whole batch (it is then redelivered; stored results and
   *   published marks make that safe), after every other message went as far as it could.
   */
  processMessages(messages: readonly QueueMessage[]): Promise<MessageOutcome[]> {
    return this.measured(
      'queue',
      async () => {
        const outcomes = await this.admitWaiting(messages.length, () => this.parts.asyncScorer.processBatch(messages));
        for (const o of outcomes) if (o.kind === 'scored' && !o.replayed) this.observe('queue', o.result);
        return outcomes;
      },
      (os) => (os.every((o) => o.kind === 'rejected') ? 'rejected' : 'ok'),
    );
  }

  /**
   * Readiness as the engine already knows it, without running anything: the last sample inference (at
   * load and at every swap, then every `HEALTH_PROBE_INTERVAL_SEC` in the background), plus this
   * instance's place in the fleet (`fleet.stale`: it could not load the version the pointer names and
   * serves an older one), and `waitingFor`: the model, ruleset or signals version that does not yet serve its pointer's active
   * version. Starts loading if nothing is loaded yet. The detailed view: admin only.
   */
  readiness(): EngineReadiness {
    return currentReadiness(this.parts.sessions, this.parts.rollout, [
      this.parts.rollout,
      this.parts.decisioning?.rollout,
      this.parts.signals?.rollout,
    ]);
  }

  /**
   * The anonymous readiness answer (`GET /api/health/ready`): status and model, and while an artifact does not yet
   * serve its pointer's active version, what readiness waits for (kind, name, versions).
   */
  ready(): PublicReadiness {
    return publicReadiness(this.readiness());
  }

  /** The detailed health view (`GET /api/models/health`, authLevel admin). */
  healthDetail(): HealthDetail {
    return healthDetail(this.readiness(), this.parts.config.model.healthProbeIntervalMs / 1000);
  }

  /** Releases everything the engine holds. */
  async dispose(): Promise<void> {
    await this.parts.readinessMonitor?.dispose();
    await this.parts.rollout?.dispose();
    await this.parts.decisioning?.dispose();
    await this.parts.signals?.dispose();
    await this.parts.sessions.dispose();
    await this.parts.context.dispose();
    for (const d of [...(this.parts.disposables ?? [])].reverse()) await d.dispose();
  }
}

export type { BatchItemResult } from './scoring/batch-body';
export type { HealthDetail, PublicReadiness } from './inference/readiness-views';
