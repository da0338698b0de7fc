import { batchDeadlineMs } from './inference/deadline';
import {
  currentReadiness,
  healthDetail,
  publicReadiness,
  type EngineReadiness,
  type HealthDetail,
  type PublicReadiness,
} from './inference/readiness-views';
import type { Arrival, EngineAdmissionStats } from './admission/admission';
import type { MessageMeta, MessageOutcome, QueueMessage } from './async/async-scorer';
import type { InferResponse } from './oip/oip-service';
import { batchItems, sortBatch, type BatchItemResult } from './scoring/batch-body';
import { parsePaymentEvent } from './domain/payment-event';
import type { ScoreOptions, ScoreResult } from './scoring/scorer';
import type { ScoringPath } from './telemetry/telemetry';
import { EngineServices } from './app/engine-services';

export type { EngineParts } from './app/engine-services';

/**
 * The engine every trigger shares: one per process. Its methods are the entry points the function
 * adapters call; each validates its input and returns plain results or throws `AppError`s. The getters of
 * its parts are {@link EngineServices}'.
 */
export class Engine extends EngineServices {
  /** The admission's counters. */
  get admissionStats(): EngineAdmissionStats | undefined {
    return this.parts.admission.stats;
  }

  /**
   * Now on the admission's clock, ms: an adapter reads it as the invocation reaches the app, before the body
   * is read, and passes it as `arrivedAt`; the request's deadline starts there.
   */
  arrival(): number {
    return this.parts.admission.clock();
  }

  /**
   * Runs `fn` as one admitted request with a deadline of `deadlineMs` from `arrivedAt` (default now)
   * (`lib/admission/admission.ts`). {@link score}, {@link scoreBatch} and {@link infer} admit their valid
   * work with it, after validation.
   * @throws AppError `overloaded` (503 + `Retry-After` from the backlog) when the request cannot finish
   *   within its deadline, or the memory ceiling is full; `fn` then never runs.
   */
  admit<T>(deadlineMs: number, fn: (arrival: Arrival) => Promise<T>, arrivedAt?: number): Promise<T> {
    return this.parts.admission.run(deadlineMs, fn, arrivedAt);
  }

  /**
   * Like {@link admit}, for work without a deadline that can wait (a Service Bus delivery of `weight`
   * messages): when the ceiling is full it waits up to `ADMISSION_QUEUE_WAIT_MS` for a freed slot instead of
   * being refused at once, because a refused delivery goes back to the queue and counts a delivery attempt
   * toward the dead-letter limit.
   * @throws AppError `overloaded` (transient) when no slot frees in time; `fn` then never runs.
   */
  admitWaiting<T>(weight: number, fn: () => Promise<T>): Promise<T> {
    return this.parts.admission.runWaiting(weight, fn);
  }

  /** Loads and warms the model (single-flight), then follows the model pointer once. Logs the outcome; rethrows a failure. */
  async start(): Promise<void> {
    await this.parts.sessions.ensureReady();
    await this.parts.rollout.converge(); // readiness waits until the pointer has been read
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
   * @throws AppError as the inference protocol's `infer` does (lib/oip/oip-service.ts).
   */
  infer(name: string, version: string | undefined, body: unknown, options: ScoreOptions = {}): Promise<InferResponse> {
    const deadlineMs = options.deadlineMs ?? this.parts.config.inference.deadlineMs;
    return this.oip.infer(name, version, body, {
      deadlineMs,
      admit: (run) => this.admit(deadlineMs, ({ at }) => run(at), options.arrivedAt),
    });
  }

  private observe<R extends ScoreResult>(path: ScoringPath, r: R): R {
    this.parts.telemetry.scored({
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
    const tracer = this.parts.telemetry.tracer;
    return tracer.enabled ? tracer.spanSync('validate', {}, parse) : parse();
  }

  /** Records `scoring.request.duration` (outcome `ok`, `rejected` or the error code) around one request. */
  private async measured<T>(
    path: ScoringPath,
    fn: () => Promise<T>,
    outcome: (r: T) => string = () => 'ok',
  ): Promise<T> {
    const t = this.parts.telemetry;
    const now = this.parts.now;
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
      this.parts.signals.rollout,
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

  /**
   * Releases everything the engine holds: every subsystem, in the reverse of their construction order, each even
   * if another fails. A second call is harmless (it returns the first's outcome).
   * @throws AggregateError naming each subsystem that failed to dispose.
   */
  dispose(): Promise<void> {
    return this.parts.dispose();
  }
}

export type { BatchItemResult } from './scoring/batch-body';
export type { HealthDetail, PublicReadiness } from './inference/readiness-views';
