/**
 * The learning-loop slice of the settings: the decision log (where it goes, its queue and batches, the key of
 * its keyed hashes) and the drift monitor's window.
 */
import * as path from 'node:path';
import { z } from 'zod';
import { appRoot } from './app-root';
import { bool, emptyToUndefined, int, optStr } from './zod-helpers';

/**
 * The key of the decision log's keyed hashes under `npm start` when `DECISION_LOG_HASH_KEY` is unset. Public
 * and documented (docs/learning-loop.md): it only keeps local hashes stable across restarts. In Azure the key
 * comes from Key Vault (`DECISION_LOG_HASH_KEY_SECRET_NAME`).
 */
export const DEV_DECISION_LOG_HASH_KEY = 'dev-only-decision-log-hash-key-do-not-use-in-azure';

/** The environment variables of the learning slice (merged into the config's schema). */
export const learningEnv = {
  DECISION_LOG_ENABLED: bool(true).describe('Record every decision in the decision log (docs/learning-loop.md).'),
  DECISION_LOG_DIR: z
    .preprocess(emptyToUndefined, z.string().default('.data/decisions'))
    .describe('Local folder of the decision log and labels when no storage account is configured.'),
  DECISION_LOG_CONTAINER: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like decisions' })
        .default('decisions'),
    )
    .describe("Blob container of the decision log and labels, on the models' storage account."),
  DECISION_LOG_QUEUE_MAX: int(1, 1_000_000, 20_000).describe(
    'Most decision records waiting to be written; more are dropped and counted (`learning.decisions.dropped`).',
  ),
  DECISION_LOG_BATCH_MAX: int(1, 10_000, 1000).describe('Most decision records per write.'),
  DECISION_LOG_FLUSH_MS: int(1, 60_000, 1000).describe('Longest a decision record waits for its write, ms.'),
  DECISION_LOG_HASH_KEY: z
    .preprocess(
      emptyToUndefined,
      z.string().min(16, { error: 'must be at least 16 characters' }).default(DEV_DECISION_LOG_HASH_KEY),
    )
    .describe(
      'HMAC key of the keyed hashes that replace id fields in the decision log; default a public development key (`npm start` only). Azure reads it from Key Vault.',
    ),
  DECISION_LOG_HASH_KEY_SECRET_NAME: optStr.describe(
    'Key Vault secret holding the decision log hash key (needs `KEY_VAULT_URL`); set in Azure.',
  ),
  RECENT_DECISIONS_PER_USER: int(1, 200, 20).describe(
    "Decisions kept per user for the case page's recent payments (the newest; keyed by the user id's keyed hash).",
  ),
  RECENT_DECISIONS_TTL_DAYS: int(1, 90, 30).describe(
    "How long a user's recent decisions are kept after their last decision, days.",
  ),
  RECENT_DECISIONS_MAX_USERS: int(1, 10_000_000, 100_000).describe(
    'Most users whose recent decisions are kept in process when there is no Redis (least recently written forgotten first).',
  ),
  DRIFT_WINDOW: int(100, 1_000_000, 10_000).describe(
    "Payments per model version in the drift monitor's sliding window (PSI against the training bins).",
  ),
};

type LearningEnv = z.infer<z.ZodObject<typeof learningEnv>>;

/** Learning-loop settings (see {@link learningSettingsFrom}). */
export interface LearningSettings {
  readonly decisionLog: {
    /** `DECISION_LOG_ENABLED` (default true). */
    readonly enabled: boolean;
    /** Local folder of the log and labels when no blob storage is configured (`DECISION_LOG_DIR`, default `.data/decisions`). */
    readonly dir: string;
    /** Blob container of the log and labels, on the models' storage account (`DECISION_LOG_CONTAINER`, default `decisions`). */
    readonly container: string;
    /** Records waiting to be written at most; more are dropped and counted (`DECISION_LOG_QUEUE_MAX`, 20 000). */
    readonly queueMax: number;
    /** Records per write at most (`DECISION_LOG_BATCH_MAX`, 1000). */
    readonly batchMax: number;
    /** Longest a record waits before its batch is written, ms (`DECISION_LOG_FLUSH_MS`, 1000). */
    readonly flushMs: number;
    /**
     * Key of the keyed hashes (HMAC-SHA256) of id fields: Key Vault secret `DECISION_LOG_HASH_KEY_SECRET_NAME`
     * (with `KEY_VAULT_URL`), else `DECISION_LOG_HASH_KEY` (default: the documented development key).
     */
    readonly hashKey:
      | { readonly mode: 'setting'; readonly key: string; readonly devDefault: boolean }
      | { readonly mode: 'keyvault'; readonly vaultUrl: string; readonly secretName: string };
  };
  /** Payments in the drift monitor's sliding window, per model version (`DRIFT_WINDOW`, 10 000). */
  readonly driftWindow: number;
  /** The per-user recent decisions the case page shows (lib/learning/recent-decisions.ts). */
  readonly recent: {
    /** Entries per user (`RECENT_DECISIONS_PER_USER`, 20). */
    readonly perUser: number;
    /** How long a user's entries live after their last decision, days (`RECENT_DECISIONS_TTL_DAYS`, 30). */
    readonly ttlDays: number;
    /** Users kept by the in-process store (`RECENT_DECISIONS_MAX_USERS`, 100 000). */
    readonly maxUsers: number;
  };
}

/** The slice from parsed settings; `KEY_VAULT_URL` is needed with a secret name (the error names it). */
export function learningSettingsFrom(e: LearningEnv & { readonly KEY_VAULT_URL?: string | undefined }): {
  value: LearningSettings;
  errors: { path: string; message: string }[];
} {
  const errors: { path: string; message: string }[] = [];
  const secret = e.DECISION_LOG_HASH_KEY_SECRET_NAME;
  if (secret !== undefined && e.KEY_VAULT_URL === undefined)
    errors.push({ path: 'KEY_VAULT_URL', message: 'is required with DECISION_LOG_HASH_KEY_SECRET_NAME' });
  const value: LearningSettings = {
    decisionLog: {
      enabled: e.DECISION_LOG_ENABLED,
      dir: path.resolve(appRoot(), e.DECISION_LOG_DIR),
      container: e.DECISION_LOG_CONTAINER,
      queueMax: e.DECISION_LOG_QUEUE_MAX,
      batchMax: e.DECISION_LOG_BATCH_MAX,
      flushMs: e.DECISION_LOG_FLUSH_MS,
      hashKey:
        secret !== undefined && e.KEY_VAULT_URL !== undefined
          ? { mode: 'keyvault', vaultUrl: e.KEY_VAULT_URL, secretName: secret }
          : {
              mode: 'setting',
              key: e.DECISION_LOG_HASH_KEY,
              devDefault: e.DECISION_LOG_HASH_KEY === DEV_DECISION_LOG_HASH_KEY,
            },
    },
    driftWindow: e.DRIFT_WINDOW,
    recent: {
      perUser: e.RECENT_DECISIONS_PER_USER,
      ttlDays: e.RECENT_DECISIONS_TTL_DAYS,
      maxUsers: e.RECENT_DECISIONS_MAX_USERS,
    },
  };
  return { value, errors };
}
