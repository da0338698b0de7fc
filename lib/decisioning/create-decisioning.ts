/**
 * Builds decisioning from settings: the list store (Redis when configured, else in-process) behind L1, the
 * shipped ruleset (highest version in `RULESET_DIR/{RULESET_NAME}/`), and ruleset rollout (pointer on Redis or
 * in-process; documents from the rulesets container when storage is configured, else the models folder's
 * `rulesets/` and the shipped folder).
 */
import * as path from 'node:path';
import type { TokenCredential } from '@azure/identity';
import type { Redis } from 'ioredis';
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import type { Logger } from '../platform/logger';
import { unrefTimers, type Timers } from '../platform/timers';
import type { CompiledRuleset, ServingSignals } from './compile-ruleset';
import { Decisioning, type DecisioningEvents } from './decisioning';
import { ListLookup, type ListLookupEvents } from './list-lookup';
import { MemoryListStore, type ListStore } from './list-store';
import { loadRuleset } from './load-ruleset';
import { RedisListStore } from './redis-list-store';
import { createPointerStore } from '../rollout/create-pointer-store';
import type { PointerStore } from '../rollout/pointer-store';
import { parseRulesetState, type RulesetState } from './ruleset-traffic';
import { openDocumentRepository } from '../rollout/document-repository';
import {
  folderRulesetRepository,
  RULESET_LAYOUT,
  WithApprovedDrafts,
  type RulesetRepository,
} from './ruleset-repository';
import { GOLDEN_THRESHOLDS, RulesetRollout } from './ruleset-rollout';

/** Dependencies of decisioning; each has a production default. */
export interface DecisioningDeps {
  readonly logger: Logger;
  /** The engine's shared Redis client, if Redis is configured; else in-process stores. */
  readonly redis: (() => Redis | undefined) | undefined;
  readonly listStore?: ListStore;
  readonly pointerStore?: PointerStore<RulesetState>;
  readonly repository?: RulesetRepository;
  /** The document of an approved draft of a version not uploaded (lib/governance), read after the repository. */
  readonly approvedDrafts?: (name: string, version: string) => Promise<string | undefined>;
  readonly credential?: TokenCredential;
  readonly timers?: Timers;
  /** Wall clock, epoch ms (list entry expiry, rejection times). */
  readonly wallNow?: () => number;
  readonly on?: Partial<DecisioningEvents & ListLookupEvents>;
  /**
   * The signals version serving beside the rules (late-bound: signals are created after decisioning): an upload
   * whose rule reads a signal it lacks is refused, naming the rule and the column (docs/signals.md "Rules").
   */
  readonly servingSignals?: () => ServingSignals | undefined;
}

/** Decisioning and its rollout; `undefined` when no ruleset is configured (`RULESET_NAME=none`). */
export interface DecisioningParts {
  readonly decisioning: Decisioning;
  readonly rollout: RulesetRollout;
  /** Where ruleset versions are read from (uploads and shipped ones; not drafts). */
  readonly repository: RulesetRepository;
  dispose(): Promise<void>;
}

function defaultRepository(config: Config, deps: DecisioningDeps): RulesetRepository {
  // a storage account is configured (as for models): else the models folder plays the container (uploads land in
  // its rulesets/{name}/{version}.json, as in the container), with the shipped folder behind it
  return openDocumentRepository(RULESET_LAYOUT, {
    storage: config.rollout.storage,
    container: config.decisioning.container,
    folders: [path.join(config.model.dir, 'rulesets'), config.decisioning.dir],
    credential: deps.credential,
  });
}

/**
 * The highest version of the shipped ruleset that validates. A version that does not (left in the folder) never
 * stops a start: it is reported (`refused`, naming the version, the file, the rule and the column) and the next
 * lower version serves. @throws AppError `ruleset_invalid` (the newest version's) when no version validates.
 */
async function shipped(
  config: Config,
  name: string,
  refused: (e: { version: string; reason: string }) => void,
): Promise<CompiledRuleset | undefined> {
  const folder = folderRulesetRepository(config.decisioning.dir);
  const versions = await folder.versions(name);
  let first: unknown;
  for (const version of [...versions].reverse()) {
    try {
      return loadRuleset(await folder.read(name, version), GOLDEN_THRESHOLDS, folder.source(name, version));
    } catch (err) {
      first ??= err;
      refused({ version, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  if (first !== undefined) throw first;
  return undefined;
}

/**
 * Builds and starts decisioning.
 * @throws AppError `ruleset_invalid` when no shipped ruleset version loads (start-up fails naming the rule); a
 *   refused newer version is logged and skipped.
 */
export async function createDecisioning(config: Config, deps: DecisioningDeps): Promise<DecisioningParts | undefined> {
  const name = config.decisioning.rulesetName;
  if (name === undefined) return undefined;
  const { logger, redis } = deps;
  const prefix = config.redis.keyPrefix;
  const listStore =
    deps.listStore ??
    (redis === undefined ? new MemoryListStore(deps.wallNow) : new RedisListStore(redis, prefix, deps.wallNow));
  const lookup = new ListLookup(listStore, {
    maxEntries: config.decisioning.listL1MaxEntries,
    ttlMs: config.decisioning.listL1TtlMs,
    ...(deps.wallNow === undefined ? {} : { wallNow: deps.wallNow }),
    on: {
      lookupFailed: (e) => logger.warn('list lookup failed: rules on those lists fail closed to review', e),
      ...deps.on,
    },
  });
  const initial = await shipped(config, name, (e) =>
    logger.warn('shipped ruleset version refused: the next lower version serves', e),
  );
  const decisioning = new Decisioning(lookup, initial, {
    ruleErrors: (e) => logger.warn('rule evaluation failed: decision held for review', e),
    swapped: (e) => logger.info('ruleset swapped', e),
    ...deps.on,
  });
  const pointerStore =
    deps.pointerStore ??
    createPointerStore<RulesetState>({
      kind: 'ruleset',
      redis,
      prefix,
      stateDir: config.rollout.stateDir,
      file: 'rulesets.json',
      parse: parseRulesetState,
      warn: (m) => logger.warn(`rulesets: ${m}`),
    });
  let repository: RulesetRepository;
  try {
    repository = deps.repository ?? defaultRepository(config, deps);
  } catch (err) {
    throw new AppError('config_invalid', 'The rulesets container settings are not usable.', { cause: err });
  }
  const rollout = new RulesetRollout({
    name,
    decisioning,
    store: pointerStore,
    repository:
      deps.approvedDrafts === undefined ? repository : new WithApprovedDrafts(repository, deps.approvedDrafts),
    timers: deps.timers ?? unrefTimers,
    reconcileMs: config.rollout.reconcileIntervalMs,
    ...(deps.wallNow === undefined ? {} : { wallNow: deps.wallNow }),
    ...(config.rollout.instanceId === undefined ? {} : { instanceId: config.rollout.instanceId }),
    logger,
    ...(deps.servingSignals === undefined ? {} : { servingSignals: deps.servingSignals }),
    on: {
      followFailed: (e) => logger.warn('could not load the ruleset the pointer names; serving the current one', e),
    },
  });
  logger.info(`decisioning: ruleset ${name} ${initial?.version ?? '(none shipped)'}, lists ${listStore.description}`, {
    pointer: pointerStore.description,
    rulesets: repository.description,
  });
  await lookup.start().catch(() => false);
  await rollout.start();
  return {
    decisioning,
    rollout,
    repository,
    dispose: async () => {
      await rollout.dispose();
      await listStore.dispose();
    },
  };
}
