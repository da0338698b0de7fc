/**
 * Loads a ruleset: validates the JSON document (zod), then compiles every CEL expression once. Any error
 * rejects the whole ruleset, naming the rule id and the position (1-based column in the expression). Given the
 * serving signals version, a rule reading a signal it lacks (`signals.<name>`) is such an error.
 */
import { AppError, type FieldError } from '../errors/errors';
import { fieldErrorsOf } from '../errors/field-errors';
import { signalReferences } from '../signals/signals-cel';
import { celEnvironment, type CompiledExpression } from './cel-environment';
import {
  ACTIONS,
  rulesetSchema,
  type Action,
  type ListKeyField,
  type ProfileDocument,
  type RulesetDocument,
} from './ruleset-schema';

/** One compiled rule. */
export interface CompiledRule {
  readonly id: string;
  readonly description: string;
  readonly action: Action;
  readonly when: CompiledExpression;
}

/** One compiled score offset. */
export interface CompiledOffset {
  readonly id: string;
  readonly offset: number;
  readonly when: CompiledExpression;
}

/** A merchant profile. */
export type Profile = Pick<ProfileDocument, 'id' | 'thresholds' | 'offset'>;

/** A list the ruleset's expressions look up (`in_list`), with the event field it is keyed by. */
export interface ListUse {
  readonly name: string;
  readonly key: ListKeyField;
}

/** A loaded ruleset: expressions compiled, rules grouped by action in ruleset order, profiles indexed. */
export interface CompiledRuleset {
  readonly name: string;
  readonly version: string;
  readonly document: RulesetDocument;
  /** Every declared list (the admin API accepts only these names). */
  readonly lists: ReadonlyMap<string, ListKeyField>;
  /** The lists some expression calls `in_list` on: the memberships to prefetch before each evaluation. */
  readonly listsUsed: readonly ListUse[];
  /** The signals version the ruleset declares it reads (`signals` in the document), if any. */
  readonly signals: { readonly name: string; readonly version: string } | undefined;
  /** Every signal some expression reads (`signals.<name>`), in order of first use. */
  readonly signalsUsed: readonly string[];
  /** Rules by action, each in ruleset order. */
  readonly rules: Readonly<Record<Action, readonly CompiledRule[]>>;
  readonly offsets: readonly CompiledOffset[];
  readonly profilesByMerchant: ReadonlyMap<string, Profile>;
  readonly profilesByCategory: ReadonlyMap<string, Profile>;
  /** The ruleset's `default` profile, if it declares one (else the model's thresholds apply). */
  readonly defaultProfile: Profile | undefined;
}

/** The signals version that serves beside a ruleset: the names its rules may read. */
export interface ServingSignals {
  readonly names: ReadonlySet<string>;
  readonly version: string;
}

/** A JSON AST node of the CEL library (`op`, `args`, `pos`). */
interface AstNode {
  readonly op: string;
  readonly args: unknown;
  readonly pos?: number;
}

const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && 'op' in v && 'args' in v;

/** Every `in_list` call in an AST: the first argument must be a declared list's name, the second `event.<its key>`. */
function collectListCalls(
  root: AstNode,
  lists: ReadonlyMap<string, ListKeyField>,
  problems: (m: string, pos: number) => void,
  out: Map<string, ListUse>,
): void {
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!isNode(n)) return;
    if (n.op === 'call' && Array.isArray(n.args) && n.args[0] === 'in_list') {
      const [nameArg, keyArg] = (n.args[1] ?? []) as unknown[];
      const pos = n.pos ?? 0;
      const name =
        isNode(nameArg) && nameArg.op === 'value' && typeof nameArg.args === 'string' ? nameArg.args : undefined;
      const key = lists.get(name ?? '');
      if (name === undefined) problems('in_list: the first argument must be a list name (a string literal)', pos);
      else if (key === undefined) problems(`in_list: list "${name}" is not declared in "lists"`, pos);
      else {
        const ok =
          isNode(keyArg) &&
          keyArg.op === '.' &&
          Array.isArray(keyArg.args) &&
          isNode(keyArg.args[0]) &&
          keyArg.args[0].op === 'id' &&
          keyArg.args[0].args === 'event' &&
          keyArg.args[1] === key;
        if (!ok) problems(`in_list: list "${name}" is keyed by ${key}: the second argument must be event.${key}`, pos);
        else out.set(name, { name, key });
      }
    }
    if (Array.isArray(n.args)) walk(n.args);
    else if (isNode(n.args)) walk(n.args);
  };
  walk(root);
}

/** The 1-based column of a CEL error, if it carries one. */
function errorColumn(err: unknown): number {
  const node = (err as { node?: { pos?: unknown } } | undefined)?.node;
  return typeof node?.pos === 'number' ? node.pos + 1 : 1;
}

function errorSummary(err: unknown): string {
  const e = err as { summary?: unknown; message?: unknown };
  return String(e.summary ?? e.message ?? 'invalid expression').split('\n')[0] as string;
}

/** The document, or `ruleset_invalid` naming every bad field. */
function parseDocument(value: unknown): RulesetDocument {
  const parsed = rulesetSchema.safeParse(value);
  if (parsed.success) return parsed.data;
  const errors = fieldErrorsOf(parsed.error.issues);
  const raw = (value ?? {}) as { name?: unknown; version?: unknown };
  const label =
    typeof raw.name === 'string' && typeof raw.version === 'string'
      ? `Ruleset ${raw.name.slice(0, 64)} ${raw.version.slice(0, 32)}`
      : 'The ruleset';
  return throwInvalid(label, errors);
}

function throwInvalid(label: string, errors: FieldError[]): never {
  throw new AppError(
    'ruleset_invalid',
    `${label} is invalid: ${errors.map((e) => `${e.path || '(document)'}: ${e.message}`).join('; ')}.`,
    { errors },
  );
}

/** `ruleset_invalid` naming every expression that did not compile, with its rule and column. */
function compileErrors(doc: RulesetDocument, errors: FieldError[]): AppError {
  const each = errors.map(
    (e) =>
      `rule ${e.rule ?? '?'} (${e.path}, column ${e.column ?? 1}): ${e.message.replace(/^rule [^:]*: column \d+: /, '')}`,
  );
  return new AppError('ruleset_invalid', `Ruleset ${doc.name} ${doc.version} does not compile: ${each.join('; ')}.`, {
    errors,
  });
}

/** The merchant profiles by merchant id and by category (the first profile naming one wins). */
function profileMaps(profiles: RulesetDocument['profiles']): {
  byMerchant: Map<string, Profile>;
  byCategory: Map<string, Profile>;
} {
  const byMerchant = new Map<string, Profile>();
  const byCategory = new Map<string, Profile>();
  for (const p of profiles) {
    const profile: Profile = { id: p.id, thresholds: p.thresholds, offset: p.offset };
    for (const m of p.merchantIds) if (!byMerchant.has(m)) byMerchant.set(m, profile);
    for (const c of p.merchantCategories) if (!byCategory.has(c)) byCategory.set(c, profile);
  }
  return { byMerchant, byCategory };
}

/**
 * Validates and compiles a ruleset document (already parsed JSON).
 * @throws AppError `ruleset_invalid` naming every bad field, or every expression that does not compile
 *   (`path` = `rules.<i>.when` etc., message starting with the rule id and the column), or every
 *   `signals.<name>` that `signals` (the serving version, when given) lacks, at the column of `signals`.
 */
export function compileRuleset(value: unknown, signals?: ServingSignals): CompiledRuleset {
  const doc = parseDocument(value);
  const lists = new Map(doc.lists.map((l) => [l.name, l.key] as const));
  const used = new Map<string, ListUse>();
  const signalsUsed = new Set<string>();
  const errors: FieldError[] = [];
  const env = celEnvironment();
  const compile = (id: string, source: string, path: string): CompiledExpression => {
    const fail = (message: string, column: number): CompiledExpression => {
      errors.push({ path, message: `rule ${id}: column ${column}: ${message}`, rule: id, column });
      return () => false;
    };
    try {
      const expr = env.parse(source);
      const checked = expr.check();
      if (!checked.valid) return fail(errorSummary(checked.error), errorColumn(checked.error));
      if (checked.type !== 'bool' && checked.type !== 'dyn')
        return fail(`the expression must be a bool, not ${checked.type ?? 'unknown'}`, 1);
      const before = errors.length;
      collectListCalls(expr.ast as unknown as AstNode, lists, (m, pos) => fail(m, pos + 1), used);
      for (const ref of signalReferences(expr.ast)) {
        if (signals === undefined || signals.names.has(ref.name)) signalsUsed.add(ref.name);
        else fail(`signal "${ref.name}" is not in signals version ${signals.version}`, ref.pos + 1);
      }
      return errors.length > before
        ? () => false
        : (vars) => expr(vars as unknown as Record<string, unknown>) as unknown;
    } catch (err) {
      return fail(errorSummary(err), errorColumn(err));
    }
  };
  const grouped: Record<Action, { id: string; description: string; action: Action; when: CompiledExpression }[]> = {
    allow: [],
    block: [],
    review: [],
    escalate: [],
  };
  doc.rules.forEach((r, i) => {
    grouped[r.action].push({
      id: r.id,
      description: r.description,
      action: r.action,
      when: compile(r.id, r.when, `rules.${i}.when`),
    });
  });
  const offsets = doc.offsets.map((o, i) => ({
    id: o.id,
    offset: o.offset,
    when: compile(o.id, o.when, `offsets.${i}.when`),
  }));
  if (errors.length > 0) throw compileErrors(doc, errors);
  const { byMerchant, byCategory } = profileMaps(doc.profiles);
  const def = doc.profiles.find((p) => p.id === 'default');
  return Object.freeze({
    name: doc.name,
    version: doc.version,
    document: doc,
    lists,
    listsUsed: [...used.values()],
    signals: doc.signals,
    signalsUsed: [...signalsUsed],
    rules: Object.fromEntries(ACTIONS.map((a) => [a, grouped[a]])) as unknown as Record<
      Action,
      readonly CompiledRule[]
    >,
    offsets,
    profilesByMerchant: byMerchant,
    profilesByCategory: byCategory,
    defaultProfile: def === undefined ? undefined : { id: def.id, thresholds: def.thresholds, offset: def.offset },
  });
}
