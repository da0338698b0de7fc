import type { Config } from './config/config';
import type { ContextProvider } from './context/context-provider';
import type { SessionManager, Readiness } from './inference/session-manager';
import { parsePaymentEvent } from './scoring/event-schema';
import type { ScoreOptions, ScoreResult, Scorer } from './scoring/scorer';
import type { Logger } from './telemetry/logger';

/** The parts an {@link Engine} is made of (built by the composition root, `lib/app.ts`). */
export interface EngineParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly sessions: SessionManager;
  readonly context: ContextProvider;
  readonly scorer: Scorer;
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
    return this.parts.scorer.score(event, options);
  }

  /** Readiness: a sample inference through the active model. Starts loading if nothing is loaded yet. */
  async readiness(): Promise<Readiness> {
    if (!this.parts.sessions.isReady) void this.parts.sessions.ensureReady().catch(() => undefined);
    return this.parts.sessions.readiness();
  }

  /** Releases everything the engine holds. */
  async dispose(): Promise<void> {
    await this.parts.sessions.dispose();
    await this.parts.context.dispose();
    for (const d of [...(this.parts.disposables ?? [])].reverse()) await d.dispose();
  }
}
