/** The frozen configuration's type ({@link loadConfig} in `config.ts` builds it): one slice per module. */
import type { PROVIDERS } from './env-schema-engine';
import type { EscalationSettings } from './escalation-settings';
import type { LearningSettings } from './learning-settings';
import type { CaseSettings } from './case-settings';
import type { TelemetrySettings } from './telemetry-settings';

/** The parsed, frozen configuration. Each module receives only its slice. */
export interface Config {
  readonly model: {
    readonly dir: string;
    readonly name: string;
    readonly version: string | undefined;
    readonly warmupOnStart: boolean;
    /** Period of the background sample inference that readiness reports, ms (`HEALTH_PROBE_INTERVAL_SEC`, default 15 s). */
    readonly healthProbeIntervalMs: number;
  };
  readonly ort: {
    readonly executionProviders: readonly (typeof PROVIDERS)[number][];
    readonly intraOpThreads: number;
    readonly graphOptimization: 'disabled' | 'basic' | 'extended' | 'all';
  };
  readonly inference: {
    /** Where sessions run: worker threads, inline on the event loop, or auto (inline only for tiny models). */
    readonly mode: 'auto' | 'workers' | 'inline';
    /** Worker threads; 0 = auto (fits the core count). */
    readonly workers: number;
    readonly batchMaxSize: number;
    readonly batchMaxSizeGpu: number;
    /** Batch window in ms since the first queued request. */
    readonly batchWindowMs: number;
    readonly queueMax: number;
    readonly deadlineMs: number;
    readonly deadlineMaxMs: number;
    /** A batch request's default deadline grows by this much per valid event after the first, ms (capped at `deadlineMaxMs`). */
    readonly batchDeadlinePerEventMs: number;
  };
  /** Admission (`lib/admission/`): the deadline rule's floor, the memory ceiling, the Service Bus wait. */
  readonly admission: {
    /** Most requests inside the engine at once (`ADMISSION_MAX_INFLIGHT`, 1024); also the starting limit. */
    readonly maxInflight: number;
    /** Admission by deadline never refuses below this many inside; also the ceiling's floor (`ADMISSION_MIN_INFLIGHT`, 16; at most `maxInflight`). */
    readonly minInflight: number;
    /** Interval between limit changes, ms (`ADMISSION_INTERVAL_MS`, 100). */
    readonly intervalMs: number;
    /** How long a Service Bus delivery waits for a slot before it is sent back to the queue, ms (`ADMISSION_QUEUE_WAIT_MS`, 5000; 0 = no wait). */
    readonly queueWaitMs: number;
  };
  readonly redis: {
    readonly url: string | undefined;
    readonly keyPrefix: string;
    /** Budget for one Redis call on the request path, ms. */
    readonly timeoutMs: number;
    readonly keyVaultUrl: string | undefined;
    readonly secretName: string;
    readonly host: string | undefined;
    readonly entraObjectId: string | undefined;
    readonly managedIdentityClientId: string | undefined;
  };
  readonly context: {
    readonly l2TtlSec: number;
    readonly l1TtlSec: number;
    readonly l1MaxEntries: number;
    readonly l1MaxBytes: number;
    /** Origin of profiles on a cache miss: Redis `profile:{userId}` (default) or `GET {url}/{userId}` with a timeout, ms. */
    readonly source: { readonly kind: 'redis' | 'http'; readonly url: string | undefined; readonly timeoutMs: number };
  };
  /**
   * Exactly-once publishing: results and published marks kept `ttlSec`; the transaction lock outlives a dead
   * holder by `lockTtlMs` (renewed while it runs). `ttlSec` never exceeds the topic's duplicate window (checked).
   */
  readonly idempotency: { readonly ttlSec: number; readonly maxEntries: number; readonly lockTtlMs: number };
  /** Service Bus: entity names and the namespace for results (unset = the bus the host passes, `npm start`'s embedded bus). */
  readonly serviceBus: {
    readonly scoringQueue: string;
    readonly resultsTopic: string;
    /** The results topic's duplicate-detection window, s (`RESULTS_DUPLICATE_WINDOW_SEC`, as deployed by infra-bicep). */
    readonly duplicateWindowSec: number;
    readonly rejectedQueue: string;
    readonly fullyQualifiedNamespace: string | undefined;
    readonly clientId: string | undefined;
  };
  readonly http: {
    readonly scoreBodyLimitBytes: number;
    readonly batchBodyLimitBytes: number;
    /** `POST v2/models/.../infer` body limit, bytes (`OIP_BODY_LIMIT_BYTES`, default 4 MiB). */
    readonly oipBodyLimitBytes: number;
    readonly batchMaxEvents: number;
  };
  /** Model rollout: the models container, validation bounds and the fleet reconcile period. */
  readonly rollout: {
    /**
     * The models container: a connection string (`ModelStorage`, else a connection-string `AzureWebJobsStorage`
     * such as `UseDevelopmentStorage=true`), or identity-based (`ModelStorage__blobServiceUri` + `ModelStorage__clientId`).
     * Neither: the local models folder (`MODEL_DIR`) plays the container.
     */
    readonly storage: {
      readonly connectionString: string | undefined;
      readonly blobServiceUri: string | undefined;
      readonly clientId: string | undefined;
      readonly container: string;
    };
    /** Largest model file accepted, bytes (default 256 MiB). */
    readonly maxModelBytes: number;
    /** Largest mean absolute golden-set score shift against the active version accepted without force (default 0.1). */
    readonly shiftMax: number;
    /** Reconcile period of every instance, ms (default 30 000). */
    readonly reconcileIntervalMs: number;
    /** Blob metadata key that forces an upload past the shift bound (default `force`). */
    readonly forceMetadataKey: string;
    /** Run one full GC after a retired version is released, returning its model buffers at once (default true). */
    readonly reclaimAfterSwap: boolean;
    /** This instance's id (`INSTANCE_ID`, else `WEBSITE_INSTANCE_ID` / `CONTAINER_APP_REPLICA_NAME`); undefined = host name and pid. */
    readonly instanceId: string | undefined;
    /** Without Redis, where the model and ruleset pointers are kept across restarts (`ROLLOUT_STATE_DIR`); undefined = memory only. */
    readonly stateDir: string | undefined;
    /** Whether a model upload rolls out directly and a promote needs one admin (`MODEL_DIRECT_ROLLOUT`, default true), or four-eyes. */
    readonly directRollout: boolean;
  };
  /** Rules, lists and merchant profiles (docs/decisioning.md). */
  readonly decisioning: {
    /** The ruleset served (`RULESET_NAME`, default `fraud-rules`); undefined (`none`) = no rules, the model's thresholds decide. */
    readonly rulesetName: string | undefined;
    /** The shipped rulesets folder (`RULESET_DIR`, default `rulesets` at the app root): `{name}/{version}.json`. */
    readonly dir: string;
    /** Blob container of `rulesets/{name}/{version}.json` uploads (`RULESETS_CONTAINER`, default `models`, the models container). */
    readonly container: string;
    /** Whether a ruleset upload rolls out directly (`RULESET_DIRECT_ROLLOUT`, default true) or becomes a draft. */
    readonly directRollout: boolean;
    /** Time to live of a list membership in L1, ms (`LIST_L1_TTL_SEC`, default 10 s; changes invalidate at once). */
    readonly listL1TtlMs: number;
    /** Most list memberships held in L1 (`LIST_L1_MAX_ENTRIES`, default 100 000). */
    readonly listL1MaxEntries: number;
  };
  /** The signals document served (docs/signals.md). */
  readonly signals: {
    /** Its name (`SIGNALS_NAME`, default `default`). */
    readonly name: string;
    /** The shipped signals folder (`SIGNALS_DIR`, default `signals` at the app root): `{name}/{version}.json`. */
    readonly dir: string;
    /** Blob container of `features/{name}/{version}.json` uploads (`SIGNALS_CONTAINER`, default `models`). */
    readonly container: string;
    /** One script call per payment for every key (`SIGNALS_ONE_SCRIPT`; single, non-clustered Redis only). */
    readonly oneScript: boolean;
    /** Keys the in-process aggregate store keeps (`SIGNALS_MAX_ENTITIES`, default 100 000). */
    readonly maxEntities: number;
  };
  /** LLM escalation of the hard tail to Azure OpenAI (docs/escalation.md); undefined = off. */
  readonly escalation: EscalationSettings | undefined;
  /** The learning loop: decision log and drift (docs/learning-loop.md). */
  readonly learning: LearningSettings;
  /** Review cases, their store and who acts on them (docs/cases.md). */
  readonly cases: CaseSettings;
  readonly logLevel: 'debug' | 'info' | 'warn' | 'error';
  readonly telemetry: TelemetrySettings;
}
