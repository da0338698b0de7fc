/**
 * Builds the signals rollout from settings: the shipped version (the highest in `signals/{SIGNALS_NAME}/` that
 * compiles) served until a pointer names another, the pointer store (Redis or in-process, `signals.json` in
 * `ROLLOUT_STATE_DIR`), and the documents (the signals container when storage is configured, else the models
 * folder's `features/` and the shipped folder).
 * @module
 */
import { SignalsShadow } from './signals-shadow';
import * as path from 'node:path';
import type { TokenCredential } from '@azure/identity';
import type { Redis } from 'ioredis';
import type { Config } from '../config/config';
import { AppError } from '../errors/errors';
import { createPointerStore } from '../rollout/create-pointer-store';
import type { PointerStore } from '../rollout/pointer-store';
import type { Logger } from '../platform/logger';
import { unrefTimers, type Timers } from '../platform/timers';
import type { CompiledSignals } from './compiled-signals';
import { openDocumentRepository } from '../rollout/document-repository';
import { folderSignalsRepository, SIGNALS_LAYOUT, type SignalsRepository } from './signals-repository';
import { SignalsRollout } from './signals-rollout';
import { SignalsServing } from './signals-serving';
import { parseSignalsState, type SignalsState } from './signals-traffic';
import { compileSignalsText, type SignalsRequirements } from './signals-upload';

/** Dependencies of the signals rollout; each has a production default. */
export interface SignalsDeps {
  readonly logger: Logger;
  /** The engine's shared Redis client, if Redis is configured; else an in-process pointer store. */
  readonly redis: (() => Redis | undefined) | undefined;
  /** What serves reads of the signals (the serving ruleset and model versions); default nothing. */
  readonly requirements?: SignalsRequirements;
  readonly pointerStore?: PointerStore<SignalsState>;
  readonly repository?: SignalsRepository;
  readonly credential?: TokenCredential;
  readonly timers?: Timers;
  /** Wall clock, epoch ms (rejection times). */
  readonly wallNow?: () => number;
}

/** The signals served here and their rollout. */
export interface SignalsParts {
  /** What the pipeline reads (swapped atomically). */
  readonly serving: SignalsServing;
  /** The shadow share's figures: the pipeline records, the rollout's status shows. */
  readonly shadow: SignalsShadow;
  /** The shipped version: what serves without a pointer, and what a model manifest naming no signals reads. */
  readonly shipped: CompiledSignals;
  readonly rollout: SignalsRollout;
  /** Where signals versions are read from (uploads and shipped ones). */
  readonly repository: SignalsRepository;
  dispose(): Promise<void>;
}

function defaultRepository(config: Config, deps: SignalsDeps): SignalsRepository {
  // without a storage account the models folder plays the container (uploads land in its features/), the shipped
  // folder behind it
  return openDocumentRepository(SIGNALS_LAYOUT, {
    storage: config.rollout.storage,
    container: config.signals.container,
    folders: [path.join(config.model.dir, 'features'), config.signals.dir],
    credential: deps.credential,
  });
}

/**
 * The highest shipped version that compiles. A version that does not (left in the folder) never stops a start: it is
 * reported (`refused`, naming the version and why) and the next lower version serves.
 * @throws AppError `signals_invalid` (the newest version's) when versions are shipped and none compiles;
 *   `config_invalid` when none is shipped (every payment needs a signals version).
 */
export async function shippedSignals(
  dir: string,
  name: string,
  refused: (e: { version: string; reason: string }) => void,
): Promise<CompiledSignals> {
  const folder = folderSignalsRepository(dir);
  let first: unknown;
  for (const version of (await folder.versions(name)).reverse()) {
    try {
      return compileSignalsText(await folder.read(name, version), name, version, folder.source(name, version));
    } catch (err) {
      first ??= err;
      refused({ version, reason: err instanceof Error ? err.message : String(err) });
    }
  }
  if (first !== undefined) throw first;
  throw new AppError(
    'config_invalid',
    `No signals version of "${name}" is shipped (${path.join(dir, name)}/{version}.json): SIGNALS_NAME must name one.`,
    { errors: [{ path: 'SIGNALS_NAME', message: `no shipped version in ${path.join(dir, name)}` }] },
  );
}

/**
 * Builds and starts the signals rollout.
 * @throws AppError `signals_invalid` when no shipped version compiles; `config_invalid` when none is shipped or for
 *   unusable container settings.
 */
export async function createSignals(config: Config, deps: SignalsDeps): Promise<SignalsParts> {
  const { logger, redis } = deps;
  const name = config.signals.name;
  const initial = await shippedSignals(config.signals.dir, name, (e) =>
    logger.warn('shipped signals version refused: the next lower version serves', e),
  );
  const serving = new SignalsServing(initial);
  const store =
    deps.pointerStore ??
    createPointerStore<SignalsState>({
      kind: 'signals',
      redis,
      prefix: config.redis.keyPrefix,
      stateDir: config.rollout.stateDir,
      file: 'signals.json',
      parse: parseSignalsState,
      warn: (m) => logger.warn(`signals: ${m}`),
    });
  let repository: SignalsRepository;
  try {
    repository = deps.repository ?? defaultRepository(config, deps);
  } catch (err) {
    throw new AppError('config_invalid', 'The signals container settings are not usable.', { cause: err });
  }
  const shadow = new SignalsShadow();
  const rollout = new SignalsRollout({
    name,
    serving,
    shadow,
    store,
    repository,
    requirements: deps.requirements ?? (() => []),
    timers: deps.timers ?? unrefTimers,
    reconcileMs: config.rollout.reconcileIntervalMs,
    ...(deps.wallNow === undefined ? {} : { wallNow: deps.wallNow }),
    ...(config.rollout.instanceId === undefined ? {} : { instanceId: config.rollout.instanceId }),
    logger,
    on: {
      followFailed: (e) =>
        logger.warn('could not load the signals version the pointer names; serving the current one', e),
      swapped: (e) => logger.info('signals swapped', e),
    },
  });
  logger.info(`signals: ${name} ${initial.version}`, {
    pointer: store.description,
    signals: repository.description,
  });
  await rollout.start();
  return { serving, shadow, shipped: initial, rollout, repository, dispose: () => rollout.dispose() };
}
