/**
 * What the composition root's subsystems provide, by name (the map the registry's declarations are checked
 * against), and the dependencies a caller of `createEngine` may inject.
 * @module
 */
import type { Redis } from 'ioredis';
import type { Admission } from '../admission/admission';
import type { AsyncScorer } from '../async/async-scorer';
import type { MessageSender } from '../async/message-bus';
import type { ResultPublisher } from '../async/result-publisher';
import type { Cases, CasesDeps } from '../cases/create-cases';
import type { Config } from '../config/config';
import type { Insights } from '../insights/insights';
import type { ContextProvider } from '../context/context-provider';
import type { ContextProviderDeps } from '../context/create-context-provider';
import type { ServingSignals } from '../decisioning/compile-ruleset';
import type { DecisioningDeps, DecisioningParts } from '../decisioning/create-decisioning';
import type { EscalatorWiring } from '../escalation/create-escalator';
import type { DraftsRuntime } from '../governance/create-drafts';
import type { Drafts } from '../governance/drafts';
import type { Governance } from '../governance/governance';
import type { BackendFactory } from '../inference/backend';
import type { ReadinessMonitor } from '../inference/readiness-monitor';
import type { LearningDeps } from '../learning/create-learning';
import type { Learning } from '../learning/learning';
import type { RecentDecisions } from '../learning/recent-decisions';
import type { FeatureCheck, ModelSource } from '../models/model-folder';
import type { Oip } from '../oip/create-oip';
import type { StaticModel } from '../oip/model-catalog';
import type { Logger } from '../platform/logger';
import type { RolloutDeps } from '../model-rollout/create-rollout';
import type { Serving } from '../model-rollout/create-serving';
import type { ResultReviewer, Scorer } from '../scoring/scorer';
import type { SignalsDeps, SignalsParts } from '../signals/create-signals';
import type { Telemetry } from '../telemetry/telemetry';
import type { Timers } from '../platform/timers';
import type { Webhooks, WebhooksDeps } from '../webhooks/create-webhooks';
import type { Link } from './link';

/** Dependencies a caller may inject; every one has a production default. */
export interface EngineDeps {
  readonly logger?: Logger;
  readonly modelSource?: ModelSource;
  readonly backendFactory?: BackendFactory;
  readonly context?: ContextProvider;
  /** Clients for the default context provider (Redis client, credential, secret reader, clock); ignored with `context`. */
  readonly contextDeps?: ContextProviderDeps;
  /** Monotonic clock, ms. */
  readonly now?: () => number;
  /** Metrics and spans; default: on the process's providers (set up by `lib/telemetry/preload.ts`). */
  readonly telemetry?: Telemetry;
  /**
   * The host's message bus (`npm start`: its embedded bus, local/in-process-bus.ts), where results and review cases go
   * when no Service Bus namespace is configured. Default none: then async results fail to publish and the case queue
   * (`CASE_STORE` on) fails to start, each naming the setting.
   */
  readonly bus?: MessageSender;
  /** Where async results go; default the Service Bus topic if a namespace is configured, else the topic on `bus`. */
  readonly publisher?: ResultPublisher;
  /**
   * Models served as they are through the Open Inference Protocol only (no manifest, no fraud validation),
   * loaded at creation through the same backend factory (micro-batcher included). Default none.
   */
  readonly oipModels?: readonly StaticModel[];
  /** LLM escalation overrides (credential, Key Vault reader, fetch, verdict client, clock, extra event handlers). */
  readonly escalation?: Partial<Omit<EscalatorWiring, 'logger'>>;
  /** Timers of the background readiness probe; default real (unref'd) timers. */
  readonly healthTimers?: Timers;
  /** Decisioning overrides: list store, ruleset pointer store, rulesets container, timers, wall clock. */
  readonly decisioning?: Partial<Omit<DecisioningDeps, 'logger' | 'redis'>>;
  /** Signals rollout overrides: pointer store, signals container, credential, timers, wall clock, requirements. */
  readonly signals?: Partial<Omit<SignalsDeps, 'logger' | 'redis'>>;
  /** Model rollout overrides: fleet store, models container, credential, reconcile timers, wall clock, instance id. */
  readonly rollout?: Partial<Omit<RolloutDeps, 'logger' | 'redis'>>;
  /** Learning-loop overrides: store, timers, clocks, Key Vault reader. */
  readonly learning?: Partial<Omit<LearningDeps, 'logger'>>;
  /** Case queue overrides: store, PostgreSQL credential, timers, clocks. */
  readonly cases?: Partial<Omit<CasesDeps, 'logger' | 'addLabels' | 'lists'>>;
  /** Webhook overrides: topic publisher, fetch, timers, wall clock, event handlers. */
  readonly webhooks?: Partial<Omit<WebhooksDeps, 'logger' | 'cases' | 'record'>>;
}

/**
 * Calls between subsystems that run only after start and go against the construction order: the later
 * subsystem binds its link in its own `create` (see ARCHITECTURE.md, the composition root).
 */
export interface Links {
  /** A model's input features against the signals version its manifest names (bound by `signals`). */
  readonly features: Link<FeatureCheck>;
  /** The signals version that serves, as a ruleset upload is checked against it (bound by `signals`). */
  readonly servingSignals: Link<() => ServingSignals>;
  /** The approved drafts the ruleset rollout reads (bound by `drafts`). */
  readonly drafts: Link<Drafts>;
  /** Wakes the webhook relay when a case change committed (bound by `webhooks`). */
  readonly webhooks: Link<Webhooks>;
}

/** The clocks of the engine: monotonic `now`, and `clock`, the option object of the components that take one. */
export interface Clocks {
  readonly now: () => number;
  readonly clock: { readonly now?: () => number };
}

/** What each subsystem of the composition root provides, by name. */
export interface AppParts {
  readonly config: Config;
  readonly deps: EngineDeps;
  readonly clocks: Clocks;
  readonly links: Links;
  readonly logger: Logger;
  readonly telemetry: Telemetry;
  readonly backends: BackendFactory;
  readonly context: ContextProvider;
  /** The engine's shared Redis client (the context provider's), when Redis is configured and the provider is ours. */
  readonly redis: (() => Redis | undefined) | undefined;
  readonly serving: Serving;
  readonly escalator: ResultReviewer | undefined;
  readonly decisioning: DecisioningParts | undefined;
  readonly signals: SignalsParts;
  readonly learning: Learning;
  /** The per-user recent decisions the case page shows (`undefined` with `CASE_STORE=none` or the decision log off). */
  readonly recent: RecentDecisions | undefined;
  readonly cases: Cases;
  readonly governance: Governance;
  readonly webhooks: Webhooks;
  readonly drafts: DraftsRuntime | undefined;
  readonly scorer: Scorer;
  /** Asynchronous scoring, and where its results go (disposed with it). */
  readonly async: { readonly asyncScorer: AsyncScorer; readonly publisher: ResultPublisher };
  readonly admission: Admission;
  readonly oip: Oip;
  readonly insights: Insights;
  readonly readinessMonitor: ReadinessMonitor;
}
