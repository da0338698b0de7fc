/**
 * What the engine exposes of the subsystems it is made of, for the function adapters: the parts, and the getters
 * of the optional ones, each `undefined` when a setting switches its part off (an adapter names what it uses with
 * `subsystems(...)` of lib/app.ts, and its function answers a problem decided at registration when one is off).
 * @module
 */
import type { Insights } from '../insights/insights';
import type { Drafts } from '../governance/drafts';
import type { ArtifactAdmin } from '../http/admin-routes';
import { describeOutcome } from '../rollout/upload-pipeline';
import type { Admission } from '../admission/admission';
import type { AsyncScorer } from '../async/async-scorer';
import type { Config } from '../config/config';
import type { ContextProvider } from '../context/context-provider';
import type { SessionManager } from '../inference/session-manager';
import type { LabelsAdded } from '../learning/labels';
import type { Learning } from '../learning/learning';
import type { Cases } from '../cases/create-cases';
import type { IntakeMessage, RejectedCase } from '../cases/case-intake';
import type { Governance } from '../governance/governance';
import type { Webhooks } from '../webhooks/create-webhooks';
import type { WebhookService } from '../webhooks/webhook-service';
import type { CaseService } from '../cases/case-service';
import type { ModelRollout } from '../model-rollout/model-rollout';
import type { Decisioning } from '../decisioning/decisioning';
import type { DecisioningParts } from '../decisioning/create-decisioning';
import type { RulesetRollout } from '../decisioning/ruleset-rollout';
import type { SignalsParts } from '../signals/create-signals';
import type { SignalsRollout } from '../signals/signals-rollout';
import type { SignalsServing } from '../signals/signals-serving';
import type { OipService } from '../oip/oip-service';
import type { Scorer } from '../scoring/scorer';
import type { Logger } from '../platform/logger';
import type { Telemetry } from '../telemetry/telemetry';

/** The parts an engine is made of (built by the composition root, `lib/app.ts`, from its subsystems). */
export interface EngineParts {
  readonly config: Config;
  readonly logger: Logger;
  readonly sessions: SessionManager;
  readonly context: ContextProvider;
  readonly scorer: Scorer;
  /** Asynchronous (Service Bus) scoring, exactly once per transaction. */
  readonly asyncScorer: AsyncScorer;
  /** Model rollout (blob uploads, fleet pointer, canary/shadow, admin API). */
  readonly rollout: ModelRollout;
  /** Rules, lists and merchant profiles, and ruleset rollout (absent with `RULESET_NAME=none`). */
  readonly decisioning?: DecisioningParts;
  /** The signals served (aggregates and features as data) and their rollout. */
  readonly signals: SignalsParts;
  /** The Open Inference Protocol (KServe V2) over the managed models. */
  readonly oip: OipService;
  /** Metrics and spans; every scored payment is counted by path, decision and cache. */
  readonly telemetry: Telemetry;
  /** Admission by deadline, with a memory ceiling (HTTP and Service Bus share it). */
  readonly admission: Admission;
  /** Monotonic clock, ms, for `scoring.request.duration`. */
  readonly now: () => number;
  /** The learning loop: decision log, labels, drift (disposed with the engine). */
  readonly learning: Learning;
  /** The review cases: writer and API (disposed with the engine). */
  readonly cases: Cases;
  /** The audit trail (lib/governance). */
  readonly governance: Governance;
  /** The case events' webhooks: API and relay (disposed with the engine). */
  readonly webhooks: Webhooks;
  /** The console's views (rules, drift, serving). */
  readonly insights: Insights;
  /** Drafts of the served ruleset, their backtest and approval (absent without a ruleset or a case database). */
  readonly drafts?: Drafts;
  /** Disposes every subsystem the engine is made of (idempotent; `AggregateError` of every failure). */
  readonly dispose: () => Promise<void>;
}

/** A blob upload's handling: the line to log (`warn` for a refusal). */
export type ArtifactUpload = (
  blobPath: string,
  bytes: Uint8Array | undefined,
) => Promise<{ warn: boolean; text: string }>;

/** Writes a delivery batch of the case intake queue to the case store; the messages rejected for good. */
export type CaseIntakeWriter = (
  messages: readonly IntakeMessage[],
) => Promise<{ readonly opened: number; readonly rejected: RejectedCase[] }>;

/** The engine's parts and the getters of the optional ones (the entry points are `Engine`'s, lib/engine.ts). */
export class EngineServices {
  constructor(protected readonly parts: EngineParts) {}

  get config(): Config {
    return this.parts.config;
  }
  get logger(): Logger {
    return this.parts.logger;
  }
  get sessions(): SessionManager {
    return this.parts.sessions;
  }
  /** Model rollout: `handleUpload` (blob trigger), `status` / `promote` / `rollback` / `traffic` (admin API). */
  get models(): ModelRollout {
    return this.parts.rollout;
  }

  /**
   * The lists admin operations (`/api/lists/...`) on the active ruleset's lists; `undefined` when no ruleset is
   * configured (`RULESET_NAME=none`: no list is declared).
   */
  get lists(): Decisioning | undefined {
    return this.parts.decisioning?.decisioning;
  }

  /**
   * Ruleset rollout: `handleUpload` (blob trigger), `status` / `promote` / `rollback` / `traffic` (admin API);
   * `undefined` when no ruleset is configured (`RULESET_NAME=none`).
   */
  get rulesets(): RulesetRollout | undefined {
    return this.parts.decisioning?.rollout;
  }

  /**
   * The ruleset admin routes' operations: the rollout's, with the four-eyes rule when drafts are on (a version
   * whose draft is not approved is never promoted, canaried or shadowed); `undefined` when no ruleset is configured.
   */
  get rulesetAdmin(): ArtifactAdmin | undefined {
    const rollout = this.rulesets;
    if (rollout === undefined) return undefined;
    return this.parts.drafts === undefined ? rollout : this.parts.drafts.gate(rollout);
  }

  /**
   * The ruleset blob trigger: published through the rollout, or, with `RULESET_DIRECT_ROLLOUT=false`, kept as a
   * draft; either way audited (actor `blob-upload`); `undefined` when no ruleset is configured. The upload throws
   * transient AppErrors only (retried), and `dependency_unavailable` when its audit entry cannot be recorded.
   */
  get rulesetUpload(): ArtifactUpload | undefined {
    const rollout = this.rulesets;
    if (rollout === undefined) return undefined;
    const drafts = this.parts.drafts;
    if (drafts !== undefined && !this.parts.config.decisioning.directRollout)
      return (blobPath, bytes) => drafts.upload(blobPath, bytes);
    return async (blobPath, bytes) => {
      const outcome = await rollout.handleUpload(bytes === undefined ? { blobPath } : { blobPath, bytes });
      await this.parts.governance.audit.upload('ruleset', outcome); // throws (retried) when it cannot be recorded
      return describeOutcome('ruleset', outcome);
    };
  }

  /** Signals rollout: `handleUpload` (blob trigger), `status` / `promote` / `rollback` / `traffic` (admin API). */
  get signals(): SignalsRollout {
    return this.parts.signals.rollout;
  }

  /** What the scoring pipeline reads of the signals: the versions served here, swapped atomically. */
  get signalsServing(): SignalsServing {
    return this.parts.signals.serving;
  }

  /**
   * The signals blob trigger: published through the rollout, and audited (actor `blob-upload`). Returns the line to
   * log (`warn` for a refusal).
   * @throws transient AppErrors only (retried), and `dependency_unavailable` when its audit entry cannot be recorded.
   */
  async signalsUpload(blobPath: string, bytes: Uint8Array | undefined): Promise<{ warn: boolean; text: string }> {
    const outcome = await this.signals.handleUpload(bytes === undefined ? { blobPath } : { blobPath, bytes });
    await this.parts.governance.audit.upload('signals', outcome); // throws (retried) when it cannot be recorded
    return describeOutcome('signals', outcome);
  }

  /**
   * Drafts of the served ruleset (`/api/rulesets/{name}/drafts…`); `undefined` without a ruleset or a case database
   * (`CASE_STORE=none`).
   */
  get drafts(): Drafts | undefined {
    return this.parts.drafts;
  }

  /** The Open Inference Protocol endpoints' operations (`v2/...`). */
  get oip(): OipService {
    return this.parts.oip;
  }

  /**
   * Stores a `POST /api/labels` body `{ "labels": [...] }` (at most 1000); a label already stored for the same
   * (transactionId, label) changes nothing.
   * @throws AppError `validation_failed` naming every bad field, `payload_too_large`, `dependency_unavailable`.
   */
  addLabels(body: unknown): Promise<LabelsAdded> {
    return this.parts.learning.addLabels(body);
  }

  /** The governance of changes: the audit trail (`GET /api/audit`, the audited admin paths). */
  get governance(): Governance {
    return this.parts.governance;
  }

  /** The webhook API (`/api/webhooks`; docs/webhooks.md); `undefined` without a case database (`CASE_STORE=none`). */
  get webhooks(): WebhookService | undefined {
    return this.parts.webhooks.service;
  }

  /** The case API's operations (`/api/cases`, `/api/me`); `undefined` without a case store (`CASE_STORE=none`). */
  get cases(): CaseService | undefined {
    return this.parts.cases.service;
  }

  /**
   * Writes a delivery batch of the case intake queue to the case store (the `caseIntake` function); `undefined`
   * without a case store (`CASE_STORE=none`). It throws `dependency_unavailable` (after a backoff wait) while the
   * database is unavailable, so the queue redelivers the batch.
   */
  get caseIntake(): CaseIntakeWriter | undefined {
    const cases = this.parts.cases;
    return cases.service === undefined ? undefined : (messages) => cases.intake(messages);
  }

  /** The console's views: rules, drift, what serves. */
  get insights(): Insights {
    return this.parts.insights;
  }

  /** The learning loop (decision log stats, drift readings). */
  get learning(): Learning | undefined {
    return this.parts.learning;
  }
}
