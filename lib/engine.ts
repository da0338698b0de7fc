import type { AsyncScorer, MessageMeta, MessageOutcome, QueueMessage } from './async/async-scorer';
import type { Config } from './config/config';
import type { ContextProvider } from './context/context-provider';
import type { SessionManager, Readiness } from './inference/session-manager';
import type { FleetReadiness } from './rollout/fleet-agent';
import type { ModelRollout } from './rollout/model-rollout';
import { AppError, toProblem, type FieldError, type Problem } from './errors/errors';
import { parsePaymentEvent, type PaymentEvent } from './scoring/event-schema';
import type { ScoreOptions, ScoreResult, Scorer } from './scoring/scorer';
import type { Logger } from './telemetry/logger';
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
  /** Metrics and spans; every scored payment is counted by path, decision and cache. */
  readonly telemetry?: Telemetry;
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

  /** Loads and warms the model (single-flight). Logs the outcome; rethrows a failure. */
  async start(): Promise<void> {
    await this.parts.sessions.ensureReady();
  }

  /**
   * Validates and scores one payment event (the `POST /api/score` body).
   * @throws AppError `validation_failed` naming every invalid field, `model_not_ready`, `overloaded`, ...
   */
  async score(body: unknown, options?: ScoreOptions): Promise<ScoreResult> {
    const event = parsePaymentEvent(body);
    await this.parts.sessions.ensureReady();
    return this.observe('http', await this.parts.scorer.score(event, options));
  }

  private observe<R extends ScoreResult>(path: ScoringPath, r: R): R {
    this.parts.telemetry?.scored({
      path,
      decision: r.decision,
      cache: r.cache,
      modelVersion: r.model.version,
      score: r.score,
    });
    return r;
  }

  /**
   * Validates and scores a batch (the `POST /api/score/batch` body `{ "events": [...] }`, at most
   * `BATCH_MAX_EVENTS` events). Invalid events each get their own problem and do not fail the batch;
   * the valid ones are scored in one inference call.
   * @returns `{ results }`: one entry per event, in order.
   * @throws AppError `validation_failed` (not `{ events: [...] }`, or empty), `payload_too_large` (too many events), `overloaded`, `deadline_exceeded`, ...
   */
  async scoreBatch(body: unknown, options?: ScoreOptions): Promise<{ results: BatchItemResult[] }> {
    const items = batchItems(body, this.parts.config.http.batchMaxEvents);
    const results: BatchItemResult[] = new Array<BatchItemResult>(items.length);
    const valid: PaymentEvent[] = [];
    const at: number[] = [];
    items.forEach((item, i) => {
      try {
        valid.push(parsePaymentEvent(item, `events.${i}`));
        at.push(i);
      } catch (err) {
        const id = (item as { transactionId?: unknown } | null)?.transactionId;
        results[i] = {
          ...(typeof id === 'string' && id.length > 0 && id.length <= 128 ? { transactionId: id } : {}),
          error: toProblem(err),
        };
      }
    });
    if (valid.length > 0) {
      await this.parts.sessions.ensureReady();
      const scored = await this.parts.scorer.scoreBatch(valid, options);
      scored.forEach((r, k) => (results[at[k] as number] = this.observe('batch', r)));
    }
    return { results };
  }

  /**
   * Processes one Service Bus message: scores it once per transaction (redeliveries re-publish the stored
   * result), or returns a rejection for a message that can never be scored.
   * @throws transient errors only (the message is then redelivered).
   */
  async processMessage(message: unknown, meta: MessageMeta): Promise<MessageOutcome> {
    const [outcome] = await this.processMessages([{ body: message, meta }]);
    return outcome as MessageOutcome;
  }

  /**
   * Processes a Service Bus delivery batch (`cardinality: 'many'`) with one store pipeline per step and one
   * inference call: one outcome per message, in order, each with the guarantees of {@link processMessage}.
   * @throws transient errors only, for the whole batch (it is then redelivered; stored results and
   *   published marks make that safe), after every other message went as far as it could.
   */
  async processMessages(messages: readonly QueueMessage[]): Promise<MessageOutcome[]> {
    const outcomes = await this.parts.asyncScorer.processBatch(messages);
    for (const o of outcomes) if (o.kind === 'scored' && !o.replayed) this.observe('queue', o.result);
    return outcomes;
  }

  /**
   * Readiness: a sample inference through the active model, plus this instance's place in the fleet
   * (`fleet.stale`: it could not load the version the pointer names and serves an older one). Starts
   * loading if nothing is loaded yet.
   */
  async readiness(): Promise<Readiness & { readonly fleet?: FleetReadiness }> {
    if (!this.parts.sessions.isReady) void this.parts.sessions.ensureReady().catch(() => undefined);
    const r = await this.parts.sessions.readiness();
    return this.parts.rollout === undefined ? r : { ...r, fleet: this.parts.rollout.readiness() };
  }

  /** Releases everything the engine holds. */
  async dispose(): Promise<void> {
    await this.parts.rollout?.dispose();
    await this.parts.sessions.dispose();
    await this.parts.context.dispose();
    for (const d of [...(this.parts.disposables ?? [])].reverse()) await d.dispose();
  }
}

/** One entry of a batch response: a score result, or the problem of an invalid event. */
export type BatchItemResult = ScoreResult | { readonly transactionId?: string; readonly error: Problem };

/** The `events` array of a batch body. @throws AppError `validation_failed` / `payload_too_large`. */
function batchItems(body: unknown, maxEvents: number): unknown[] {
  const errors: FieldError[] = [];
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    errors.push({ path: '', message: 'must be an object like { "events": [...] }' });
  } else {
    for (const key of Object.keys(body)) if (key !== 'events') errors.push({ path: key, message: 'unknown field' });
    const events = (body as { events?: unknown }).events;
    if (events === undefined) errors.push({ path: 'events', message: 'is required' });
    else if (!Array.isArray(events)) errors.push({ path: 'events', message: 'must be an array of payment events' });
    else if (events.length === 0) errors.push({ path: 'events', message: 'must contain at least 1 event' });
    else if (events.length > maxEvents) {
      throw new AppError('payload_too_large', `A batch holds at most ${maxEvents} events.`, {
        errors: [{ path: 'events', message: `must contain at most ${maxEvents} events` }],
      });
    }
    if (errors.length === 0) return events as unknown[];
  }
  throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
}
