/**
 * Infrastructure contract, governance side: the Azure deployment turns four-eyes on for every kind that has it
 * (models: `MODEL_DIRECT_ROLLOUT`, rulesets: `RULESET_DIRECT_ROLLOUT`, both `false` in the Bicep app settings of
 * every plan), while the embedded defaults (the code's default and the local samples) roll out directly.
 */
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import { fileScope, moduleScope, type BicepFile } from './support/bicep-reader';
import { outcomes } from './support/bicep-values';
import { find, loadFixture } from './support/contract-fixture';
import { SAMPLES, sampleValues, type PlanSettings } from './support/sources';
import type { SettingInfo } from '../../lib/config/env-schema';

const FOUR_EYES_SETTINGS = ['MODEL_DIRECT_ROLLOUT', 'RULESET_DIRECT_ROLLOUT'];

let settings: readonly SettingInfo[];
let main: BicepFile;
let plans: PlanSettings[];

before(async () => {
  ({ settings, main, plans } = await loadFixture());
});

describe('infra contract: four-eyes', () => {
  it('every plan of the Azure deployment sets direct rollout off (four-eyes) for models and rulesets', () => {
    const problems: string[] = [];
    for (const p of plans)
      for (const name of FOUR_EYES_SETTINGS) {
        const a = find(p, name);
        if (a?.value === undefined) {
          problems.push(`${name} is not set on ${p.plan}`);
          continue;
        }
        const inMain = outcomes(a.value, fileScope(main));
        const o = inMain.kind === 'unknown' ? outcomes(a.value, moduleScope(fileScope(main), p.module)) : inMain;
        if (o.kind !== 'values' || o.values.some((v) => String(v) !== 'false'))
          problems.push(`${name} on ${p.plan} can be ${JSON.stringify(o)}, expected 'false'`);
      }
    assert.ok(plans.length > 0, 'main.bicep has plans');
    assert.deepEqual(problems, [], problems.join('; '));
  });

  it('the embedded defaults roll out directly: the code default and both local samples are true', () => {
    for (const name of FOUR_EYES_SETTINGS) {
      assert.equal(settings.find((s) => s.name === name)?.defaultValue, true, `${name} default`);
      for (const file of SAMPLES) assert.equal(sampleValues(file)[name], 'true', `${name} in ${file}`);
    }
  });
});
