/**
 * Shared inputs of the infrastructure contract tests, and small helpers over them.
 * @module
 */
import type { SettingInfo } from '../../../lib/config/env-schema';
import type { AppSetting, BicepFile } from './bicep-reader';
import { codeSettings, mainBicep, planSettings, registeredBindings, type Binding, type PlanSettings } from './sources';

/** What the contract compares. */
export interface Fixture {
  readonly settings: readonly SettingInfo[];
  readonly bindings: Binding[];
  readonly main: BicepFile;
  readonly plans: PlanSettings[];
}

/** Reads the code (config schema, registrations) and main.bicep with its per-plan app settings. */
export async function loadFixture(): Promise<Fixture> {
  const main = mainBicep();
  return { settings: codeSettings(), bindings: await registeredBindings(), main, plans: planSettings(main) };
}

/** Names of app settings. */
export const names = (list: readonly AppSetting[]): Set<string> => new Set(list.map((s) => s.name));

/** One app setting of a plan by name. */
export const find = (plan: PlanSettings, name: string): AppSetting | undefined =>
  plan.settings.find((s) => s.name === name);

/** Rows of the markdown tables (in `text`) whose header has `column`: cell of `column` keyed by the row's text. */
export function tableColumn(text: string, column: string): { row: string; cell: string }[] {
  const out: { row: string; cell: string }[] = [];
  let index: number | undefined; // undefined = outside a table; -1 = a table without that column
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('|')) {
      index = undefined;
      continue;
    }
    const cells = t
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (index === undefined) index = cells.indexOf(`\`${column}\``);
    else if (index >= 0 && !/^-+$/.test(cells[0] ?? '')) out.push({ row: t, cell: cells[index] ?? '' });
  }
  return out;
}
