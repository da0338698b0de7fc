/** Builds the learning loop from configuration (called once by the composition root). */
import { hostname } from 'node:os';
import type { Config } from '../config/config';
import { unrefTimers, type Timers } from '../platform/timers';
import type { SecretReader } from '../platform/redis/connection';
import type { Logger } from '../platform/logger';
import { BlobLearningStore, type BlobStoreOptions } from './blob-store';
import { DecisionLog, type DecisionLogEvents } from './decision-log';
import { DriftMonitor, type PsiReading } from './drift-monitor';
import { FolderLearningStore } from './folder-store';
import { KeyedHash } from '../platform/keyed-hash';
import { LabelStore } from './labels';
import { Learning } from './learning';
import { writerName, type LearningStore } from './learning-store';
import { azureCredential } from '../platform/credential';
import { blobConfigured } from '../platform/object-storage';

/** Dependencies of {@link createLearning}; every one has a production default. */
export interface LearningDeps {
  readonly logger: Logger;
  /** The store; default Blob Storage when the models' account is configured, else the folder `DECISION_LOG_DIR`. */
  readonly store?: LearningStore;
  /** Blob client options (credential, pipeline) of the default blob store. */
  readonly blob?: BlobStoreOptions;
  /** Key Vault reader of the hash key; default a `SecretClient` on `KEY_VAULT_URL`. */
  readonly secretReader?: SecretReader;
  readonly timers?: Timers;
  /** Wall clock, ms. */
  readonly wallClock?: () => number;
  /** Monotonic clock, ms. */
  readonly now?: () => number;
  /** Extra handlers of the log's events. */
  readonly on?: Partial<DecisionLogEvents>;
  /** Where the log's counts and the drift readings go (telemetry's learning metrics); default nowhere. */
  readonly metrics?: {
    events(): Partial<DecisionLogEvents>;
    watchDrift(source: () => readonly PsiReading[]): () => void;
  };
}

/** The store the settings name: the decisions container on the models' account, else the local folder. */
export function learningStore(config: Config, blob: BlobStoreOptions = {}): LearningStore {
  const s = config.rollout.storage;
  return blobConfigured(s)
    ? BlobLearningStore.create(
        { ...s, container: config.learning.decisionLog.container },
        // bounded: a write (and the flush on shutdown) gives up within about 30 s; its records are counted as dropped
        { pipeline: { retryOptions: { maxTries: 3, tryTimeoutInMs: 10_000, maxRetryDelayInMs: 2_000 } }, ...blob },
      )
    : new FolderLearningStore(config.learning.decisionLog.dir);
}

/** First and longest wait between two reads of the hash key while Key Vault cannot give it, ms. */
const KEY_RETRY_FIRST_MS = 1_000;
const KEY_RETRY_MAX_MS = 60_000;

/** The Key Vault reader of the hash key: `deps.secretReader`, else a `SecretClient` made once, with the app identity. */
function vaultReader(config: Config, vaultUrl: string, deps: Pick<LearningDeps, 'secretReader'>): SecretReader {
  return (
    deps.secretReader ??
    // loaded only when a vault is configured
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    new (require('@azure/keyvault-secrets') as typeof import('@azure/keyvault-secrets')).SecretClient(
      vaultUrl,
      azureCredential(config.redis.managedIdentityClientId),
    )
  );
}

/** The secret's value, or `undefined` when the vault cannot give one of at least 16 characters. */
async function readVaultKey(reader: SecretReader, secretName: string): Promise<string | undefined> {
  try {
    const v = (await reader.getSecret(secretName)).value?.trim();
    return v === undefined || v.length < 16 ? undefined : v;
  } catch {
    return undefined;
  }
}

/**
 * Reads the hash key (setting, or Key Vault secret). `undefined`, logged, when the vault cannot give it
 * ({@link createLearning} then reads it again in the background).
 */
export async function readHashKey(
  config: Config,
  deps: Pick<LearningDeps, 'logger' | 'secretReader'>,
): Promise<string | undefined> {
  const k = config.learning.decisionLog.hashKey;
  if (k.mode === 'setting') {
    if (k.devDefault && config.rollout.storage.blobServiceUri !== undefined)
      deps.logger.warn('decision log: DECISION_LOG_HASH_KEY is the public development key; set it from Key Vault');
    return k.key;
  }
  const v = await readVaultKey(vaultReader(config, k.vaultUrl, deps), k.secretName);
  if (v === undefined)
    deps.logger.error(
      'decision log: the hash key could not be read from Key Vault; decisions are dropped and counted until it is',
      { secretName: k.secretName },
    );
  return v;
}

/**
 * The decision log's event handlers: telemetry's and the caller's, and a log line per drop reason at most every
 * 10 s with the count since the last line (every drop is counted by telemetry).
 */
function decisionLogEvents(deps: LearningDeps, wallClock: () => number): Partial<DecisionLogEvents> {
  const logger = deps.logger;
  const metrics = deps.metrics?.events();
  const pending = new Map<string, { count: number; at: number }>();
  return {
    dropped: (e) => {
      metrics?.dropped?.(e);
      deps.on?.dropped?.(e);
      const p = pending.get(e.reason) ?? { count: 0, at: 0 };
      p.count += e.count;
      pending.set(e.reason, p);
      const t = wallClock();
      if (t - p.at < 10_000) return;
      logger.warn('decision log: records dropped', { count: p.count, reason: e.reason, error: e.error });
      pending.set(e.reason, { count: 0, at: t });
    },
    written: (e) => {
      metrics?.written?.(e);
      deps.on?.written?.(e);
    },
  };
}

/** Builds the learning loop: store, decision log (when enabled), labels, drift monitor. */
export async function createLearning(config: Config, deps: LearningDeps): Promise<Learning> {
  const s = config.learning;
  const store = deps.store ?? learningStore(config, deps.blob);
  const logger = deps.logger;
  const wallClock = deps.wallClock ?? Date.now;
  const on = decisionLogEvents(deps, wallClock);
  const log = s.decisionLog.enabled
    ? new DecisionLog({
        store,
        writer: writerName(config.rollout.instanceId ?? `${hostname()}-${process.pid}`),
        queueMax: s.decisionLog.queueMax,
        batchMax: s.decisionLog.batchMax,
        flushMs: s.decisionLog.flushMs,
        timers: deps.timers ?? unrefTimers,
        ...(deps.now === undefined ? {} : { now: deps.now }),
        on,
      })
    : undefined;
  const keySource = s.decisionLog.hashKey;
  const reader =
    s.decisionLog.enabled && keySource.mode === 'keyvault' ? vaultReader(config, keySource.vaultUrl, deps) : undefined;
  const key = s.decisionLog.enabled ? await readHashKey(config, { logger, secretReader: reader }) : undefined;
  const drift = new DriftMonitor(s.driftWindow);
  const unwatch = deps.metrics?.watchDrift(() => drift.readings());
  const timers = deps.timers ?? unrefTimers;
  let stopKeyRetry = (): void => undefined;
  const learning = new Learning({
    store,
    log,
    hash: key === undefined ? undefined : new KeyedHash(key),
    labels: new LabelStore(store, wallClock),
    drift,
    unwatch: () => {
      stopKeyRetry();
      unwatch?.();
    },
    wallClock,
    lost: (reason) => on.dropped?.({ count: 1, reason }),
  });
  if (log !== undefined && key === undefined && reader !== undefined && keySource.mode === 'keyvault') {
    // Key Vault did not give the key at start: read it again, backing off 1 s → 60 s, until it does.
    let delay = KEY_RETRY_FIRST_MS;
    let handle: unknown;
    let stopped = false;
    stopKeyRetry = () => {
      stopped = true;
      timers.clearTimeout(handle);
    };
    const retry = (): void => {
      handle = timers.setTimeout(() => {
        // a failed retry is not logged again: the drops are counted
        void readVaultKey(reader, keySource.secretName).then((k) => {
          if (stopped) return;
          if (k === undefined) return retry();
          learning.useHashKey(new KeyedHash(k));
          logger.info('decision log: the hash key was read from Key Vault; decisions are recorded again');
        });
      }, delay);
      delay = Math.min(delay * 2, KEY_RETRY_MAX_MS);
    };
    retry();
  }
  return learning;
}
