/**
 * What serves reads of the signals, as the signals rollout checks a version against (upload, promote, traffic): the
 * serving model versions' input features and the serving ruleset's `signals.<name>`. The composition root builds
 * the provider from the parts that serve; these only shape what they read.
 * @module
 */
import type { ModelManifest } from '../models/manifest';
import type { SignalsRequirement, SignalsRequirements } from './signals-upload';

/** The input features of each model version that serves (the active one, a candidate), by name and version. */
export function modelRequirements(manifests: readonly (ModelManifest | undefined)[]): SignalsRequirement[] {
  const out: SignalsRequirement[] = [];
  for (const m of manifests) {
    if (m === undefined || out.some((r) => r.who === `model ${m.name} ${m.version}`)) continue;
    out.push({ who: `model ${m.name} ${m.version}`, names: m.features.map((f) => f.name) });
  }
  return out;
}

/** A ruleset as the requirements read it: the signals its rules and offsets read (`CompiledRuleset.signalsUsed`). */
export interface RulesetSignalsUse {
  readonly name: string;
  readonly version: string;
  readonly signalsUsed?: readonly string[];
}

/** The signals the rules of each ruleset version that serves read. */
export function rulesetRequirements(rulesets: readonly (RulesetSignalsUse | undefined)[]): SignalsRequirement[] {
  const out: SignalsRequirement[] = [];
  for (const rs of rulesets) {
    const names = rs?.signalsUsed ?? [];
    if (rs === undefined || names.length === 0) continue;
    out.push({ who: `ruleset ${rs.name} ${rs.version}`, names });
  }
  return out;
}

/** One provider of several. */
export function allRequirements(...providers: readonly SignalsRequirements[]): SignalsRequirements {
  return () => providers.flatMap((p) => p());
}
