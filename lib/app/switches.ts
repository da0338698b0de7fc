/**
 * Which of the engine's optional parts the settings switch off, decided from the configuration alone (the same one
 * the subsystems are created from), so a function knows when it registers whether what it uses is on; and, for each
 * part that is off, the problem detail naming the setting that turns it on.
 * @module
 */
import type { Config } from '../config/config';

/** The engine getters (lib/app/engine-services.ts) that are `undefined` when a setting switches their part off. */
export const SWITCHED = [
  'cases',
  'caseIntake',
  'webhooks',
  'rulesets',
  'rulesetUpload',
  'rulesetAdmin',
  'lists',
  'drafts',
] as const;

/** A part a setting can switch off. */
export type Switched = (typeof SWITCHED)[number];

const NO_CASES = 'set CASE_STORE to pglite or postgres to turn it on';
const NO_RULESET = 'set RULESET_NAME to a ruleset to turn it on';

/**
 * Why `name` is off under `config` (a problem detail naming the setting that turns it on), or `undefined` when it
 * is on. Mirrors the factories: no case store (`CASE_STORE=none`) means no case API, intake or webhooks; no
 * ruleset (`RULESET_NAME=none`) no ruleset rollout or lists; drafts need both.
 */
export function offReason(config: Config, name: Switched): string | undefined {
  const noCases = config.cases.store.kind === 'none';
  const noRuleset = config.decisioning.rulesetName === undefined;
  switch (name) {
    case 'cases':
    case 'caseIntake':
      return noCases ? `The case queue is off (CASE_STORE=none): ${NO_CASES}.` : undefined;
    case 'webhooks':
      return noCases ? `Webhooks need a case database, which is off (CASE_STORE=none): ${NO_CASES}.` : undefined;
    case 'rulesets':
    case 'rulesetUpload':
    case 'rulesetAdmin':
      return noRuleset ? `No ruleset is configured (RULESET_NAME=none): ${NO_RULESET}.` : undefined;
    case 'lists':
      return noRuleset ? `No ruleset is configured (RULESET_NAME=none), so no lists: ${NO_RULESET}.` : undefined;
    case 'drafts':
      if (noRuleset) return `Ruleset drafts need a ruleset (RULESET_NAME=none): ${NO_RULESET}.`;
      return noCases ? `Ruleset drafts need a case database (CASE_STORE=none): ${NO_CASES}.` : undefined;
  }
}

/** Whether `name` is one of the parts a setting can switch off. */
export function isSwitched(name: string): name is Switched {
  return (SWITCHED as readonly string[]).includes(name);
}
