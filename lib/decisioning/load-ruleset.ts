/**
 * Loading a ruleset end to end: JSON text → schema → compile → golden cases. Whatever fails rejects the whole
 * ruleset with AppError `ruleset_invalid`. Also: memberships of an event on a ruleset's lists, from entries.
 */
import { AppError, type FieldError } from '../errors/errors';
import { EMPTY_VELOCITY } from '../domain/user-context';
import type { ListMemberships } from './cel-environment';
import { compileRuleset, type CompiledRuleset, type ListUse } from './compile-ruleset';
import { evaluateRuleset, type Thresholds } from './evaluate-ruleset';

/** The list entries looked up for one event: `listName → event[key]`, for each list in `uses`. */
export function membershipKeys(
  uses: readonly ListUse[],
  event: Readonly<Record<string, unknown>>,
): { name: string; value: string | undefined }[] {
  return uses.map((u) => {
    const v = event[u.key];
    return { name: u.name, value: typeof v === 'string' ? v : undefined };
  });
}

/** Memberships from in-memory entries (golden cases; tests). */
export function membershipsFrom(
  rs: CompiledRuleset,
  event: Readonly<Record<string, unknown>>,
  entries: Readonly<Record<string, readonly string[]>>,
): ListMemberships {
  return new Map(
    membershipKeys(rs.listsUsed, event).map((k) => [
      k.name,
      k.value !== undefined && (entries[k.name] ?? []).includes(k.value),
    ]),
  );
}

/**
 * Runs the ruleset's golden cases.
 * @returns one message per case that gives another decision or fires other rules (empty: all pass).
 */
export function goldenFailures(rs: CompiledRuleset, fallback: Thresholds): FieldError[] {
  const out: FieldError[] = [];
  rs.document.golden.forEach((g, i) => {
    const r = evaluateRuleset(rs, {
      event: g.event,
      features: g.features,
      velocity: { ...EMPTY_VELOCITY, ...g.velocity },
      score: g.score,
      lists: membershipsFrom(rs, g.event, g.lists),
      fallbackThresholds: fallback,
    });
    const rules = r.rules.map((x) => x.id);
    const problems: string[] = [];
    if (r.decision !== g.expect.decision) problems.push(`decision ${r.decision}, expected ${g.expect.decision}`);
    if (rules.join(',') !== g.expect.rules.join(','))
      problems.push(`rules [${rules.join(', ')}], expected [${g.expect.rules.join(', ')}]`);
    if (g.expect.profile !== undefined && r.profile.id !== g.expect.profile)
      problems.push(`profile ${r.profile.id}, expected ${g.expect.profile}`);
    if (g.expect.escalate !== undefined && r.escalate !== g.expect.escalate)
      problems.push(`escalate ${r.escalate}, expected ${g.expect.escalate}`);
    if (r.errors.length > 0) problems.push(`evaluation errors in ${r.errors.map((e) => e.ruleId).join(', ')}`);
    if (problems.length > 0)
      out.push({ path: `golden.${i}`, message: `golden case "${g.name}": ${problems.join('; ')}` });
  });
  return out;
}

/**
 * Parses, validates, compiles and checks a ruleset's golden cases.
 * @param fallback thresholds of the default profile when the ruleset declares none (the model's).
 * @throws AppError `ruleset_invalid` (bad JSON, schema, compile error naming rule id and column, golden case).
 */
export function loadRuleset(text: string, fallback: Thresholds): CompiledRuleset {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new AppError('ruleset_invalid', 'The ruleset is not valid JSON.', {
      errors: [{ path: '', message: 'malformed JSON' }],
    });
  }
  const rs = compileRuleset(value);
  const failed = goldenFailures(rs, fallback);
  if (failed.length > 0)
    throw new AppError(
      'ruleset_invalid',
      `${failed.length} golden case(s) of ruleset ${rs.name} ${rs.version} failed.`,
      {
        errors: failed,
      },
    );
  return rs;
}
