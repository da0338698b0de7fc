/**
 * Loading a ruleset end to end: JSON text → schema → compile → golden cases. Whatever fails rejects the whole
 * ruleset with AppError `ruleset_invalid`. Also: memberships of an event on a ruleset's lists, from entries.
 */
import { AppError, type FieldError } from '../errors/errors';
import { EMPTY_VELOCITY } from '../domain/user-context';
import type { ListMemberships } from './cel-environment';
import { compileRuleset, type CompiledRuleset, type ListUse, type ServingSignals } from './compile-ruleset';
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
 * @returns one error per case that gives another decision, fires other rules, or errors in other rules than it
 *   expects (empty: all pass); each message names the case, what was expected and what came out.
 */
export function goldenFailures(rs: CompiledRuleset, fallback: Thresholds): FieldError[] {
  const out: FieldError[] = [];
  rs.document.golden.forEach((g, i) => {
    const r = evaluateRuleset(rs, {
      event: g.event,
      features: g.features,
      velocity: { ...EMPTY_VELOCITY, ...g.velocity },
      signals: g.signals,
      score: g.score,
      lists: membershipsFrom(rs, g.event, g.lists),
      fallbackThresholds: fallback,
    });
    const list = (xs: readonly string[]): string => `[${xs.join(', ')}]`;
    const rules = r.rules.map((x) => x.id);
    const errored = r.errors.map((e) => e.ruleId);
    const problems: string[] = [];
    if (r.decision !== g.expect.decision) problems.push(`expected decision ${g.expect.decision}, got ${r.decision}`);
    if (rules.join(',') !== g.expect.rules.join(','))
      problems.push(`expected rules ${list(g.expect.rules)}, got ${list(rules)}`);
    if (g.expect.profile !== undefined && r.profile.id !== g.expect.profile)
      problems.push(`expected profile ${g.expect.profile}, got ${r.profile.id}`);
    if (g.expect.escalate !== undefined && r.escalate !== g.expect.escalate)
      problems.push(`expected escalate ${g.expect.escalate}, got ${r.escalate}`);
    if ([...errored].sort().join(',') !== [...g.expect.errors].sort().join(','))
      problems.push(`expected evaluation errors in ${list(g.expect.errors)}, got ${list(errored)}`);
    if (problems.length > 0)
      out.push({ path: `golden.${i}`, message: `golden case "${g.name}": ${problems.join('; ')}` });
  });
  return out;
}

/** ` (file)` when the source is known. */
const from = (source: string | undefined): string => (source === undefined ? '' : ` (${source})`);

/**
 * Parses, validates, compiles and checks a ruleset's golden cases.
 * @param fallback thresholds of the default profile when the ruleset declares none (the model's).
 * @param source where the text came from (a file path or blob name), named in every rejection.
 * @param signals the serving signals version: a rule reading a signal it lacks is refused.
 * @throws AppError `ruleset_invalid` (bad JSON, schema, compile error naming rule id and column, golden case),
 *   whose message names the ruleset, its version and `source`, and whose `errors` list every problem.
 */
export function loadRuleset(
  text: string,
  fallback: Thresholds,
  source?: string,
  signals?: ServingSignals,
): CompiledRuleset {
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new AppError('ruleset_invalid', `The ruleset${from(source)} is not valid JSON.`, {
      errors: [{ path: '', message: 'malformed JSON' }],
    });
  }
  let rs: CompiledRuleset;
  try {
    rs = compileRuleset(value, signals);
  } catch (err) {
    if (!(err instanceof AppError) || source === undefined) throw err;
    const named = err.message.replace(/^(The ruleset|Ruleset [^ ]+ [^ ]+)/, (m) => `${m}${from(source)}`);
    throw new AppError('ruleset_invalid', named, { errors: err.errors, cause: err });
  }
  const failed = goldenFailures(rs, fallback);
  if (failed.length > 0)
    throw new AppError(
      'ruleset_invalid',
      `${failed.length} golden case(s) of ruleset ${rs.name} ${rs.version}${from(source)} failed: ${failed
        .map((f) => f.message)
        .join(' | ')}.`,
      { errors: failed },
    );
  return rs;
}
