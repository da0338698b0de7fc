/**
 * The composition root: the engine's subsystems, listed; each declares what it needs and what it provides
 * (`lib/app/*-subsystems.ts`, on `lib/platform/registry.ts`), and construction and disposal order come from those
 * declarations. Production defaults live in the declarations; tests pass their own dependencies. Nothing else
 * reads `process.env`.
 */
import * as path from 'node:path';
import { StaticFiles } from './http/static-files';
import { appRoot } from './config/app-root';
import { loadConfig, type Config } from './config/config';
import { AppError } from './errors/errors';
import type { Uses } from './http/route';
import { given, startSubsystems, type AnySubsystem, type Started } from './platform/registry';
import { baseSubsystems } from './app/base-subsystems';
import { caseSubsystems } from './app/case-subsystems';
import type { AppParts, EngineDeps } from './app/parts';
import { servingSubsystems } from './app/serving-subsystems';
import { isSwitched, offReason } from './app/switches';
import { Engine } from './engine';

export type { EngineDeps } from './app/parts';

/** Every subsystem of the engine, given `config` and `deps` (the order here is not the construction order). */
export function appSubsystems(config: Config, deps: EngineDeps): AnySubsystem<AppParts>[] {
  return [
    given<AppParts, 'config'>('config', config),
    given<AppParts, 'deps'>('deps', deps),
    ...baseSubsystems,
    ...servingSubsystems,
    ...caseSubsystems,
  ];
}

/**
 * Builds an engine from configuration: starts every subsystem in the order their needs give. Loads no model
 * yet: call `engine.start()` (the app-start hook does). `engine.dispose()` disposes them in reverse order.
 * @throws Error naming a subsystem that failed to start (those started before are disposed).
 */
export async function createEngine(config: Config, deps: EngineDeps = {}): Promise<Engine> {
  return engineOf(await startSubsystems(appSubsystems(config, deps)));
}

/** The engine over started subsystems. */
export function engineOf(app: Started<AppParts>): Engine {
  const serving = app.get('serving');
  const drafts = app.get('drafts');
  return new Engine({
    config: app.get('config'),
    logger: app.get('logger'),
    sessions: serving.sessions,
    context: app.get('context'),
    scorer: app.get('scorer'),
    asyncScorer: app.get('async').asyncScorer,
    admission: app.get('admission'),
    rollout: serving.rollout,
    oip: app.get('oip').service,
    telemetry: app.get('telemetry'),
    now: app.get('clocks').now,
    ...optional('decisioning', app.get('decisioning')),
    signals: app.get('signals'),
    learning: app.get('learning'),
    cases: app.get('cases'),
    governance: app.get('governance'),
    webhooks: app.get('webhooks'),
    ...optional('drafts', drafts?.drafts),
    insights: app.get('insights'),
    dispose: () => app.dispose(),
  });
}

/** `{ [name]: value }`, or nothing when `value` is undefined (optional properties under exactOptionalPropertyTypes). */
function optional<K extends string, V>(name: K, value: V | undefined): { [P in K]?: V } {
  return (value === undefined ? {} : { [name]: value }) as { [P in K]?: V };
}

let shared: Promise<Engine> | undefined;
let sharedSettings: Config | undefined;

/**
 * This process's settings, parsed from its environment. With the telemetry preload, the only code under `lib/`,
 * `functions/` and `scripts/` that reads `process.env` (lint enforces it): scripts get their settings here too.
 */
export function configFromEnvironment(): Config {
  return loadConfig(process.env);
}

/**
 * The process-wide settings, parsed from `process.env` once: the shared engine is created from them, and the
 * functions read them when they register (which of the subsystems they use are on, {@link subsystems}).
 * @throws AppError `config_invalid` naming every bad setting.
 */
export function sharedConfig(): Config {
  sharedSettings ??= configFromEnvironment();
  return sharedSettings;
}

/**
 * The process-wide engine (module scope), created on first use from {@link sharedConfig}. Every function
 * shares it, so a warm instance has one object graph.
 */
export function sharedEngine(): Promise<Engine> {
  shared ??= createEngine(sharedConfig(), sharedDeps);
  return shared;
}

let sharedDeps: EngineDeps = {};

/**
 * Sets the dependencies of the process-wide engine (a host or a test injecting clients, clock or fault
 * wrappers). Must be called before the engine is first used.
 * @throws Error if the shared engine already exists.
 */
export function configureSharedEngine(deps: EngineDeps): void {
  if (shared !== undefined)
    throw new Error('configureSharedEngine must be called before the shared engine is first used');
  sharedDeps = deps;
}

/** Disposes the process-wide engine, if created (app terminate hook). */
export async function disposeSharedEngine(): Promise<void> {
  const e = shared;
  shared = undefined;
  sharedSettings = undefined;
  if (e !== undefined) await (await e).dispose();
}

/**
 * The Functions `authLevel` of the routes people call from the console (cases, insights, `/api/me`). Behind Easy Auth
 * (`IDENTITY_MODE=easyauth`) it is `anonymous`: Easy Auth signs the user in before the request reaches the app and
 * the identity module refuses any request without its principal, while a function key cannot be kept in a browser
 * (the pattern of azure-functions-host#11394). Otherwise `function`, as the other API routes. Read when the
 * functions register, before the engine exists, so from the environment directly (a bad value is `function`).
 */
export function peopleRoutesAuthLevel(): 'anonymous' | 'function' {
  return (process.env['IDENTITY_MODE'] ?? '').trim() === 'easyauth' ? 'anonymous' : 'function';
}

let consoleFiles: Promise<StaticFiles> | undefined;

/** The console's built files (dist/console), read once per process. */
export function sharedConsoleFiles(): Promise<StaticFiles> {
  consoleFiles ??= StaticFiles.create(path.join(appRoot(), 'dist', 'console'));
  return consoleFiles;
}

/** The parts of the engine a function can use besides the engine itself: its getters (lib/app/engine-services.ts). */
type Part =
  | 'cases'
  | 'caseIntake'
  | 'webhooks'
  | 'governance'
  | 'insights'
  | 'models'
  | 'signals'
  | 'oip'
  | 'rulesets'
  | 'rulesetUpload'
  | 'rulesetAdmin'
  | 'lists'
  | 'drafts';

/** What a function can name in {@link subsystems}: the engine (its entry points) and its parts, each on. */
export type AdapterSubsystems = { readonly engine: Engine } & { readonly [K in Part]: NonNullable<Engine[K]> };

/**
 * The subsystems `names` of the shared engine, for `route(contract, handler, { uses })` or `using(uses, handler)`
 * (lib/http/route.ts): the handler receives them, typed and on. Whether one is off is decided now, when the function
 * registers, from {@link sharedConfig}: then the function answers 404 `not_found` naming the setting that turns it on,
 * and never runs its handler. (Settings that fail to parse are left to the engine's creation, which names them.)
 */
export function subsystems<K extends keyof AdapterSubsystems>(...names: K[]): Uses<Pick<AdapterSubsystems, K>> {
  const reason = offAtRegistration(names);
  return {
    off: reason === undefined ? undefined : new AppError('not_found', reason),
    resolve: async () => {
      const engine = await sharedEngine();
      const picked: Partial<Record<keyof AdapterSubsystems, unknown>> = {};
      for (const name of names) {
        const value: unknown = name === 'engine' ? engine : engine[name as Part];
        // on at registration, off in the engine: only when injected dependencies differ from the settings
        if (value === undefined)
          throw new AppError('not_found', isSwitched(name) ? (offReason(engine.config, name) ?? name) : name);
        picked[name] = value;
      }
      return picked as Pick<AdapterSubsystems, K>;
    },
  };
}

/** Why one of `names` is off under the process's settings; `undefined` when all are on or the settings are bad. */
function offAtRegistration(names: readonly string[]): string | undefined {
  let config: Config;
  try {
    config = sharedConfig();
  } catch {
    return undefined; // the engine's creation fails naming every bad setting, as it did before functions used this
  }
  for (const name of names) {
    const reason = isSwitched(name) ? offReason(config, name) : undefined;
    if (reason !== undefined) return reason;
  }
  return undefined;
}
