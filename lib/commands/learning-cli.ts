/** Shared by the learning loop's offline commands: the store, the hash key, date arguments and the runner. */
import type { Config } from '../config/config';
import { learningStore, readHashKey } from '../learning/create-learning';
import { KeyedHash } from '../platform/keyed-hash';
import type { LearningStore } from '../learning/learning-store';

/** The learning store the service itself would use with these settings. */
export function storeOf(config: Config): LearningStore {
  return learningStore(config);
}

/** The decision log's keyed hash (setting or Key Vault, as the service reads it). @throws if unavailable. */
export async function hashFromConfig(config: Config): Promise<KeyedHash> {
  const quiet = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };
  const key = await readHashKey(config, { logger: quiet });
  if (key === undefined) throw new Error('the decision log hash key could not be read');
  return new KeyedHash(key);
}

/** Parses `--from` / `--to` (a date `2026-12-01` = its midnight UTC, or a date-time). @throws Error naming the flag. */
export function dateArg(name: string, raw: string | undefined): number {
  if (raw === undefined) throw new Error(`--${name} is required (a date like 2026-12-01 or a date-time)`);
  const t = Date.parse(/^\d{4}-\d{2}-\d{2}$/.test(raw) ? `${raw}T00:00:00Z` : raw);
  if (!Number.isFinite(t)) throw new Error(`--${name} must be a date like 2026-12-01 or a date-time`);
  return t;
}

/** Runs a command's main, printing an error's message and exiting 1 on failure. */
export function run(main: () => Promise<void>): void {
  main().catch((err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exitCode = 1;
  });
}
