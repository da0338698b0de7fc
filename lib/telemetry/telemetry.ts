/**
 * The one telemetry module: turns the components' typed events into OpenTelemetry metrics and spans,
 * exported to Application Insights (Azure Monitor) when `APPLICATIONINSIGHTS_CONNECTION_STRING` is set.
 * It is the only module that imports OpenTelemetry or the Application Insights SDK.
 */
import {
  metrics,
  trace,
  SpanStatusCode,
  type Attributes,
  type Meter,
  type MeterProvider,
  type Tracer,
  type TracerProvider,
} from '@opentelemetry/api';
import type { ContextEvents } from '../context/events';
import type { BatcherEvents } from '../inference/batcher-types';
import type { SessionManagerEvents } from '../inference/session-manager';
import type { WorkerPoolEvents } from '../inference/worker-pool-types';
import type { ScorerEvents } from '../scoring/scorer';

/** Where a scored payment came in. */
export type ScoringPath = 'http' | 'batch' | 'queue';

/** Options of {@link Telemetry.create}. */
export interface TelemetryOptions {
  /** Application Insights connection string; unset = no export (no-op instruments unless providers are given). */
  readonly connectionString?: string;
  /** Providers to use instead of the global ones (tests: in-memory readers/exporters). */
  readonly meterProvider?: MeterProvider;
  readonly tracerProvider?: TracerProvider;
}

const NAME = 'onnx-scoring';

/** Metrics and spans of the engine. Handlers are safe to call at any rate; they never throw. */
export class Telemetry {
  private readonly requests;
  private readonly scores;
  private readonly batchRows;
  private readonly batchMs;
  private readonly shed;
  private readonly expired;
  private readonly workerExits;
  private readonly degraded;
  private readonly corrupt;
  private readonly modelLoads;
  private readonly modelLoadMs;
  private readonly invalidScores;

  private constructor(
    meter: Meter,
    private readonly tracer: Tracer,
    private readonly shutdown: () => Promise<void>,
  ) {
    this.requests = meter.createCounter('scoring.requests', { description: 'Scored payments' });
    this.scores = meter.createHistogram('scoring.score', { description: 'Fraud probability of scored payments' });
    this.batchRows = meter.createHistogram('inference.batch.rows', { description: 'Rows per inference batch' });
    this.batchMs = meter.createHistogram('inference.batch.duration', {
      unit: 'ms',
      description: 'Batch dispatch to result',
    });
    this.shed = meter.createCounter('inference.shed', {
      description: 'Requests refused on arrival (queue full or deadline)',
    });
    this.expired = meter.createCounter('inference.expired', {
      description: 'Queued requests dropped past their deadline',
    });
    this.workerExits = meter.createCounter('inference.worker.exits', {
      description: 'Inference workers that died and were replaced',
    });
    this.degraded = meter.createCounter('context.degraded', { description: 'Context lookups answered degraded' });
    this.corrupt = meter.createCounter('context.corrupt', {
      description: 'Unreadable cached contexts treated as misses',
    });
    this.modelLoads = meter.createCounter('model.loads', { description: 'Model load attempts' });
    this.invalidScores = meter.createCounter('scoring.invalid_score', {
      description: 'Model outputs that were not a finite number in [0, 1] (answered review: fail closed)',
    });
    this.modelLoadMs = meter.createHistogram('model.load.duration', {
      unit: 'ms',
      description: 'Model load and warm-up time',
    });
  }

  /** Sets up export (Azure Monitor when a connection string is given) and the instruments. */
  static async create(options: TelemetryOptions = {}): Promise<Telemetry> {
    let shutdown = (): Promise<void> => Promise.resolve();
    if (options.connectionString !== undefined && options.meterProvider === undefined) {
      const ai = await import('applicationinsights');
      ai.useAzureMonitor({ azureMonitorExporterOptions: { connectionString: options.connectionString } });
      shutdown = () => ai.shutdownAzureMonitor();
    }
    const meter = (options.meterProvider ?? metrics.getMeterProvider()).getMeter(NAME);
    const tracer = (options.tracerProvider ?? trace.getTracerProvider()).getTracer(NAME);
    return new Telemetry(meter, tracer, shutdown);
  }

  /**
   * Records one scored payment (never the payment itself: decision, cache, model version and path only).
   * `score` is absent when the model gave no valid score (counted by {@link scorerEvents} instead).
   */
  scored(e: { path: ScoringPath; decision: string; cache: string; modelVersion: string; score?: number }): void {
    const attrs: Attributes = { path: e.path, decision: e.decision, cache: e.cache, 'model.version': e.modelVersion };
    this.requests.add(1, attrs);
    if (e.score !== undefined) this.scores.record(e.score, { 'model.version': e.modelVersion });
  }

  /** Handlers for the scorer's events: `scoring.invalid_score` counts model outputs that failed closed. */
  scorerEvents(): Partial<ScorerEvents> {
    return {
      invalidScore: (e) => this.invalidScores.add(1, { 'model.version': e.modelVersion, kind: e.kind }),
    };
  }

  /** Runs `fn` in a span; records its failure (error code only) on the span. */
  async span<T>(name: string, attrs: Attributes, fn: () => Promise<T>): Promise<T> {
    return this.tracer.startActiveSpan(name, { attributes: attrs }, async (span) => {
      try {
        return await fn();
      } catch (err) {
        span.setStatus({ code: SpanStatusCode.ERROR, message: (err as { code?: string }).code ?? 'error' });
        throw err;
      } finally {
        span.end();
      }
    });
  }

  /** Handlers for the micro-batcher's events. */
  batcherEvents(): Partial<BatcherEvents> {
    return {
      batchFinished: (e) => {
        this.batchRows.record(e.rows, { ok: e.ok });
        this.batchMs.record(e.ms, { ok: e.ok, ...(e.code === undefined ? {} : { code: e.code }) });
      },
      shed: (e) => this.shed.add(1, { reason: e.reason }),
      expired: (e) => this.expired.add(e.rows),
    };
  }

  /** Handlers for the worker pool's events. */
  poolEvents(): Partial<WorkerPoolEvents> {
    return { workerExit: () => this.workerExits.add(1) };
  }

  /** Handlers for the context store's events. */
  contextEvents(): Partial<ContextEvents> {
    return {
      degraded: (e) => this.degraded.add(1, { reason: e.reason }),
      corrupt: (e) => this.corrupt.add(1, { tier: e.tier }),
    };
  }

  /** Handlers for the session manager's events. */
  sessionEvents(): Partial<SessionManagerEvents> {
    return {
      loaded: (e) => {
        this.modelLoads.add(1, { outcome: 'loaded', 'model.version': e.version });
        this.modelLoadMs.record(e.loadMs, { 'model.version': e.version });
      },
      loadFailed: () => this.modelLoads.add(1, { outcome: 'failed' }),
    };
  }

  /** Flushes and stops export. */
  dispose(): Promise<void> {
    return this.shutdown();
  }
}

/** Calls every handler of the same event in turn (e.g. the logger's and telemetry's). */
export function combineHandlers<T extends object>(...parts: (Partial<T> | undefined)[]): Partial<T> {
  const out: Record<string, (...args: unknown[]) => void> = {};
  for (const part of parts) {
    for (const [name, fn] of Object.entries(part ?? {}) as [string, (...args: unknown[]) => void][]) {
      const prev = out[name];
      out[name] = prev === undefined ? fn : (...args) => (prev(...args), fn(...args));
    }
  }
  return out as Partial<T>;
}
