/**
 * What the infrastructure contract test compares: what the code reads (the config schema and the binding
 * metadata of the real registrations, collected through the local host's `@azure/functions-core` seam) and
 * what the repository provides (Bicep app settings per plan, the local settings samples, host.json, docs).
 * @module
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { configSettings, type SettingInfo } from '../../../lib/config/env-schema';
import { installCoreShim } from '../../../local/core-shim';
import type { RpcBindingInfo } from '../../../local/core-types';
import { functionModules } from '../../support/local-host';
import { appSettings, moduleAppSettings, property, readBicep, type AppSetting, type BicepFile } from './bicep-reader';

/** Repository root (the test runs from dist/test/infra/support). */
export const ROOT = path.resolve(__dirname, '../../../..');
/** infra-bicep/. */
export const INFRA = path.join(ROOT, 'infra-bicep');

/** One binding of one registered function. */
export interface Binding {
  readonly functionName: string;
  readonly name: string;
  readonly binding: RpcBindingInfo;
}

/** The settings the code reads (lib/config/config.ts). */
export function codeSettings(): readonly SettingInfo[] {
  return configSettings();
}

/** Every binding of every function the compiled function modules register with `@azure/functions`. */
export async function registeredBindings(): Promise<Binding[]> {
  const registry = installCoreShim();
  for (const m of await functionModules()) {
    // Loading the compiled function modules registers them through the shim, as the worker's entry-point load does.
    // eslint-disable-next-line @typescript-eslint/no-require-imports
    require(m);
  }
  const out: Binding[] = [];
  for (const fn of registry.functions.values()) {
    for (const [name, binding] of Object.entries(fn.metadata.bindings ?? {})) {
      out.push({ functionName: fn.name, name, binding });
    }
  }
  return out;
}

/** `%SETTING%` references in a binding's string options (queueName, topicName, path, ...). */
export function settingReferences(b: RpcBindingInfo): string[] {
  return Object.values(b)
    .filter((v): v is string => typeof v === 'string')
    .flatMap((v) => [...v.matchAll(/%([A-Za-z0-9_]+)%/g)].map((m) => m[1] as string));
}

/** A hosting plan and the app settings its app runs with. */
export interface PlanSettings {
  readonly plan: string;
  /** The module main.bicep calls for the plan (settings it adds itself are expressions of its own scope). */
  readonly module: string;
  readonly settings: readonly AppSetting[];
}

/** The Bicep main file. */
export function mainBicep(): BicepFile {
  return readBicep(path.join(INFRA, 'main.bicep'));
}

/**
 * App settings per hosting module called from main.bicep: the `appSettings` param each module call
 * passes, plus what the module adds itself (e.g. the App Insights connection string).
 * Container Apps serves both the CPU and the GPU plan (values differ by plan, names do not).
 */
export function planSettings(main: BicepFile = mainBicep()): PlanSettings[] {
  const plans: [string, string][] = [
    ['Container Apps (plan cpu and gpu)', 'functionAppContainerApps'],
    ['Flex Consumption (plan cpu, cpuHosting flex)', 'functionAppFlex'],
  ];
  return plans.map(([plan, symbol]) => {
    const call = main.modules.find((m) => m.symbol === symbol);
    if (call === undefined) throw new Error(`main.bicep: no module ${symbol}`);
    const passed = appSettings(property(call.body, 'params.appSettings') ?? '[]', main);
    const mod = readBicep(path.resolve(INFRA, call.target));
    return { plan, module: symbol, settings: moduleAppSettings(mod, passed) };
  });
}

/** The local settings samples: the embedded defaults, and local Redis + Azurite. */
export const SAMPLES = ['local.settings.sample.json', 'local.settings.redis-azurite.sample.json'] as const;

/** `Values` of a local settings sample (default: local.settings.sample.json). */
export function sampleValues(file: string = SAMPLES[0]): Record<string, string> {
  const json = JSON.parse(readFileSync(path.join(ROOT, file), 'utf8')) as {
    Values?: Record<string, string>;
  };
  return json.Values ?? {};
}

/** host.json. */
export function hostJson(): Record<string, unknown> {
  return JSON.parse(readFileSync(path.join(ROOT, 'host.json'), 'utf8')) as Record<string, unknown>;
}

/** Names in backticks in the table rows of the `## Settings` section of docs/configuration.md (or of `readme`). */
export function documentedSettingNames(
  readme = readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8'),
): Set<string> {
  const start = readme.search(/^## Settings\s*$/m);
  if (start < 0) return new Set();
  const rest = readme.slice(start + 1);
  const end = rest.search(/^## /m);
  const section = end < 0 ? rest : rest.slice(0, end);
  const names = new Set<string>();
  for (const line of section.split('\n').filter((l) => l.startsWith('|'))) {
    for (const m of line.matchAll(/`([A-Za-z_][A-Za-z0-9_]*)`/g)) names.add(m[1] as string);
  }
  return names;
}

/** Seconds of an ISO 8601 duration such as `PT21600S`, `PT10M`, `P7D`, `P1DT2H`; NaN when unreadable. */
export function isoDurationSec(d: string): number {
  const m = /^P(?:(\d+)D)?(?:T(?:(\d+)H)?(?:(\d+)M)?(?:(\d+)S)?)?$/.exec(d);
  if (m === null || d === 'P' || d.endsWith('T')) return NaN;
  const [days, h, min, s] = [m[1], m[2], m[3], m[4]].map((x) => Number(x ?? 0)) as [number, number, number, number];
  return ((days * 24 + h) * 60 + min) * 60 + s;
}
