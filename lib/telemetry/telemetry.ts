/**
 * The one telemetry module: turns the components' typed events into OpenTelemetry metrics, and gives them a
 * narrow {@link StageTracer} for spans. Export is set up once per process by `tracing.ts` (through the
 * preload); this class only creates instruments on the global (or given) providers. Only lib/telemetry
 * imports OpenTelemetry or the Application Insights SDK.
 */
import { metrics, type Meter, type MeterProvider, type TracerProvider } from '@opentelemetry/api';
import type { CacheStatus } from '../context/context-provider';
import type { AdmissionEvents } from '../admission/admission-gate';
import type { DeadlineAdmissionEvents } from '../admission/deadline-admission';
import type { ContextEvents } from '../context/events';
import type { EscalationEvents } from '../escalation/types';
import type { EscalationOutcome } from '../scoring/escalation-info';
import type { BatcherEvents, BatcherStats } from '../inference/batcher-types';
import type { SessionManagerEvents } from '../inference/session-manager';
import type { WorkerPoolEvents } from '../inference/worker-pool-types';
import { traceRedisCommands } from './redis-spans';
import { createInstruments, type Instruments } from './instruments';
import { LearningMetrics } from './learning-metrics';
import { CaseMetrics } from './case-metrics';
import { WebhookMetrics } from './webhook-metrics';
import type { WebhookRelayEvents } from '../webhooks/webhook-relay';
import type { CaseSweepEvents } from '../cases/case-sweep';
import type { CaseWriterEvents } from '../cases/case-writer';
import type { CaseIntakeEvents } from '../cases/case-intake';
import type { OutboxRelayEvents } from '../cases/outbox-relay';
import type { SpanAttributes, StageTracer } from '../platform/stage-tracer';
import { otelTracer, stageTracer, TRACER_NAME, tracingState } from './tracing';
import type { ScorerEvents } from '../scoring/scorer';
import type { BlobRepositoryEvents } from '../model-rollout/blob-model-repository';

/** Where a scored payment came in. */
export type ScoringPath = 'http' | 'batch' | 'queue';

/** An external dependency, for `scoring.external.duration`. */
export type Dependency = 'redis' | 'openai' | 'blob' | 'servicebus';

/** Options of {@link Telemetry.create}. */
export interface TelemetryOptions {
  /** Providers to use instead of the global ones (tests: in-memory readers/exporters). */
  readonly meterProvider?: MeterProvider;
  readonly tracerProvider?: TracerProvider;
}

/** Metrics and spans of the engine. Handlers are safe to call at any rate; they never throw. */
export class Telemetry {
  /** Stage spans (the no-op tracer when tracing is off). */
  readonly tracer: StageTracer;
  private readonly m: Instruments;
  /** The learning loop's metrics (decision log, drift). */
  readonly learning: LearningMetrics;
  private readonly cases: CaseMetrics;
  private readonly webhooks: WebhookMetrics;
  private readonly backends = new Set<{ readonly stats: BatcherStats }>();
  private served: { name: string; version: string } | undefined;
  private breakerOpen = 0;

  private constructor(meter: Meter, tracer: StageTracer) {
    this.tracer = tracer;
    this.learning = new LearningMetrics(meter);
    this.cases = new CaseMetrics(meter);
    this.webhooks = new WebhookMetrics(meter);
    this.m = createInstruments(meter, {
      queuedRows: () => [...this.backends].reduce((n, b) => n + b.stats.queuedRows, 0),
      served: () => this.served,
      breakerOpen: () => this.breakerOpen,
    });
  }

  /** Handlers of the webhook relay's events (delivered, failed attempts, dead letters). */
  webhookEvents(): Partial<WebhookRelayEvents> {
    return this.webhooks.events();
  }

  /** Handlers of the case queue's events: writer, sweep and verdicts (lib/telemetry/case-metrics.ts). */
  caseEvents(): {
    writer: Partial<CaseWriterEvents>;
    intake: Partial<CaseIntakeEvents>;
    sweep: Partial<CaseSweepEvents>;
    outbox: Partial<OutboxRelayEvents>;
    verdict: (e: { readonly verdict: 'fraud' | 'legit' }) => void;
  } {
    return {
      writer: this.cases.writerEvents(),
      intake: this.cases.intakeEvents(),
      sweep: this.cases.sweepEvents(),
      outbox: this.cases.outboxEvents(),
      verdict: (e) => this.cases.verdict(e),
    };
  }

  /**
   * Creates the instruments on the global providers (set up by the preload; no-ops when nothing is
   * exported) or on the given ones. Subscribes to Redis command timing when tracing is on or a meter
   * provider is given.
   */
  static create(options: TelemetryOptions = {}): Promise<Telemetry> {
    const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(TRACER_NAME);
    const otel = options.tracerProvider?.getTracer(TRACER_NAME);
    const tracer = stageTracer(otel);
    const t = new Telemetry(meter, tracer);
    return Promise.resolve(t.withRedis(options.meterProvider !== undefined || tracingState().enabled, otel));
  }

  private redisOff: () => void = () => undefined;
  private withRedis(on: boolean, otel: ReturnType<TracerProvider['getTracer']> | undefined): Telemetry {
    if (on) {
      this.redisOff = traceRedisCommands({
        ...(this.tracer.enabled ? { tracer: otel ?? otelTracer() } : {}),
        onDuration: (d, ok) => this.external('redis', d, ok),
      });
    }
    return this;
  }

  /**
   * Records one scored payment (never the payment itself: decision, cache, model version and path only).
   * `score` is absent when the model gave no valid score (counted by {@link scorerEvents} instead).
   */
  scored(e: {
    path: ScoringPath;
    decision: string;
    cache: string;
    modelVersion: string;
    score?: number;
    inferenceMs?: number;
  }): void {
    this.m.requests.add(`${e.path}|${e.decision}|${e.cache}|${e.modelVersion}`, 1, () => ({
      path: e.path,
      decision: e.decision,
      cache: e.cache,
      'model.version': e.modelVersion,
    }));
    if (e.score !== undefined) this.m.scores.record(e.score, { 'model.version': e.modelVersion });
    if (e.inferenceMs !== undefined) this.m.inferenceMs.record(e.inferenceMs, { 'model.version': e.modelVersion });
  }

  /** One inference outside the scorer (the Open Inference Protocol): `scoring.inference.duration`, ms. */
  inferred(modelVersion: string, inferenceMs: number): void {
    this.m.inferenceMs.record(inferenceMs, { 'model.version': modelVersion });
  }

  /** Handlers for the scorer's events: `scoring.invalid_score` counts model outputs that failed closed. */
  scorerEvents(): Partial<ScorerEvents> {
    return {
      invalidScore: (e) => this.m.invalidScores.add(1, { 'model.version': e.modelVersion, kind: e.kind }),
    };
  }

  /** One engine request ended (`outcome`: `ok` or the error code), `ms` from entry to answer. */
  request(e: { path: ScoringPath; outcome: string; ms: number }): void {
    this.m.requestMs.record(e.ms, { path: e.path, outcome: e.outcome });
  }

  /** One call to a dependency took `ms`. */
  external(dependency: Dependency, ms: number, ok: boolean): void {
    this.m.externalMs.record(ms, { dependency, ok });
  }

  /**
   * One context lookup: a hit counts for its tier (`l1` or `l2`); a lookup past L1 is an L1 miss; one that
   * L2 did not answer (origin load, or degraded) is an L2 miss. Hit ratio = hits / (hits + L2 misses).
   */
  cacheLookup(cache: CacheStatus, tier: 'l1' | 'l2' | undefined): void {
    if (cache === 'hit' && tier === 'l1') return this.m.cacheHits.add('l1', 1, () => ({ tier: 'l1' }));
    this.m.cacheMisses.add('l1', 1, () => ({ tier: 'l1' }));
    if (cache === 'hit') this.m.cacheHits.add('l2', 1, () => ({ tier: 'l2' }));
    else if (cache === 'degraded') this.m.cacheMisses.add('l2|degraded', 1, () => ({ tier: 'l2', degraded: true }));
    else this.m.cacheMisses.add('l2', 1, () => ({ tier: 'l2', degraded: false }));
  }

  /** Runs `fn` in a stage span (kept for callers of the earlier API). */
  span<T>(name: string, attrs: SpanAttributes, fn: () => Promise<T>): Promise<T> {
    return this.tracer.span(name as 'validate', attrs, fn);
  }

  /** Handlers for the micro-batcher's events. */
  batcherEvents(): Partial<BatcherEvents> {
    return {
      batchFinished: (e) => {
        this.m.batchRows.record(e.rows, { ok: e.ok });
        this.m.batchMs.record(e.ms, { ok: e.ok, ...(e.code === undefined ? {} : { code: e.code }) });
      },
      shed: (e) => this.m.shed.add(1, { reason: e.reason }),
      expired: (e) => this.m.expired.add(e.rows),
    };
  }

  /** Handlers for the worker pool's events. */
  poolEvents(): Partial<WorkerPoolEvents> {
    return { workerExit: () => this.m.workerExits.add(1) };
  }

  /** Handlers for the context store's events. */
  contextEvents(): Partial<ContextEvents> {
    return {
      degraded: (e) => this.m.degraded.add(1, { reason: e.reason }),
      corrupt: (e) => this.m.corrupt.add(1, { tier: e.tier }),
    };
  }

  /** Handlers for the (active) session manager's events: loads, swaps and the served version. */
  sessionEvents(): Partial<SessionManagerEvents> {
    return {
      loaded: (e) => {
        this.m.modelLoads.add(1, { outcome: 'loaded', 'model.version': e.version });
        this.m.modelLoadMs.record(e.loadMs, { 'model.version': e.version });
        const before = this.served;
        if (before !== undefined && (before.version !== e.version || before.name !== e.name))
          this.m.swaps.add(1, { 'model.name': e.name, from: before.version, to: e.version });
        this.served = { name: e.name, version: e.version };
      },
      loadFailed: () => this.m.modelLoads.add(1, { outcome: 'failed' }),
    };
  }

  /**
   * Handlers for the models container's events: each call to Blob Storage (model and manifest downloads,
   * properties, listing) as `scoring.external.duration{dependency=blob}`. Never the blob's name.
   */
  blobEvents(): Partial<BlobRepositoryEvents> {
    return { blobCall: (e) => this.external('blob', e.ms, e.ok) };
  }

  /**
   * Handlers for the deadline admission's events: `admission.refused{reason=deadline}` and
   * `admission.late_answers` (requests served after their own deadline).
   */
  deadlineAdmissionEvents(): Partial<DeadlineAdmissionEvents> {
    return {
      refused: () => this.m.admissionRefused.add(1, { reason: 'deadline' }),
      late: () => this.m.lateAnswers.add(1),
    };
  }

  /** Handlers for the admission ceiling's events. */
  admissionEvents(): Partial<AdmissionEvents> {
    return {
      refused: () => this.m.admissionRefused.add(1, { reason: 'ceiling' }),
      limitChanged: (e) => this.m.admissionLimit.record(e.to),
    };
  }

  /**
   * Handlers for the LLM escalation's events: `scoring.escalations` (by outcome), the call's time as
   * `scoring.external.duration{dependency=openai}` (only when something was sent), tokens and cost,
   * breaker transitions and the `scoring.breaker.open` gauge.
   */
  escalationEvents(): Partial<EscalationEvents> {
    return {
      escalated: (e) => {
        this.m.escalations.add(1, { outcome: e.outcome });
        if (sent(e.outcome)) this.external('openai', e.latencyMs, e.outcome === 'ok');
        if (e.promptTokens > 0) this.m.escalationTokens.add(e.promptTokens, { kind: 'prompt', model: e.model });
        if (e.completionTokens > 0)
          this.m.escalationTokens.add(e.completionTokens, { kind: 'completion', model: e.model });
        if (e.costUsd > 0) this.m.escalationCost.add(e.costUsd, { model: e.model });
      },
      breakerStateChanged: (e) => {
        this.m.breakerTransitions.add(1, { from: e.previous, to: e.state });
        this.breakerOpen = e.state === 'open' ? 1 : 0;
      },
    };
  }

  /**
   * Handlers of the loaded backends' lifecycle: the queue-depth gauge sums the queues of the backends loaded and
   * not yet disposed.
   */
  backendEvents(): {
    opened(b: { readonly stats: BatcherStats }): void;
    closed(b: { readonly stats: BatcherStats }): void;
  } {
    return {
      opened: (b) => this.backends.add(b),
      closed: (b) => this.backends.delete(b),
    };
  }

  /** Stops the Redis subscription. Export is flushed and stopped by the process's tracing setup. */
  dispose(): Promise<void> {
    this.redisOff();
    return tracingState().flush();
  }
}

/** Whether an escalation with this outcome sent a request to the LLM. */
function sent(outcome: EscalationOutcome): boolean {
  return outcome !== 'capped' && outcome !== 'breaker_open' && outcome !== 'busy';
}
