/**
 * CEL in a signals document, compiled once per version: an aggregate's `where` (a bool over `event`) and a
 * feature's `expr` (a number or a bool over `event`, `velocity`, `profile` and `signals`). Also what rules and
 * features share: the `signals.<name>` references an expression makes ({@link signalReferences}).
 * @module
 */
import { Environment } from '@marcbachmann/cel-js';

const LIMITS = { maxAstNodes: 2000, maxDepth: 64, maxListElements: 1000, maxMapEntries: 1000 } as const;

let whereEnv: Environment | undefined;
let exprEnv: Environment | undefined;

/** The environment of `where` filters: `event` (the payment as a map, as rules see it). */
export function whereEnvironment(): Environment {
  whereEnv ??= new Environment({ limits: LIMITS }).registerVariable('event', 'map');
  return whereEnv;
}

/**
 * The environment of feature expressions: `event`, `velocity` (the user's exact velocity), `profile` (the
 * user's profile: homeCountry, usualAmount, knownDevices, accountCreatedAt; empty without one) and `signals`
 * (the aggregates and the features declared before).
 */
export function exprEnvironment(): Environment {
  exprEnv ??= new Environment({ limits: LIMITS })
    .registerVariable('event', 'map')
    .registerVariable('velocity', 'map')
    .registerVariable('profile', 'map')
    .registerVariable('signals', 'map');
  return exprEnv;
}

/** A JSON AST node of the CEL library (`op`, `args`, `pos`). */
interface AstNode {
  readonly op: string;
  readonly args: unknown;
  readonly pos?: number;
}

const isNode = (v: unknown): v is AstNode => typeof v === 'object' && v !== null && 'op' in v && 'args' in v;

/** One `signals.<name>` (or `signals["name"]`) in an expression, with its 0-based position (of `signals`). */
export interface SignalReference {
  readonly name: string;
  readonly pos: number;
}

/** Every `signals.<name>` and `signals["<name>"]` an expression's AST reads, in source order. */
export function signalReferences(ast: unknown): SignalReference[] {
  const out: SignalReference[] = [];
  const walk = (n: unknown): void => {
    if (Array.isArray(n)) return n.forEach(walk);
    if (!isNode(n)) return;
    if ((n.op === '.' || n.op === '[]') && Array.isArray(n.args)) {
      const [target, key] = n.args as unknown[];
      if (isNode(target) && target.op === 'id' && target.args === 'signals') {
        const name =
          n.op === '.' ? key : isNode(key) && key.op === 'value' && typeof key.args === 'string' ? key.args : undefined;
        if (typeof name === 'string') out.push({ name, pos: target.pos ?? 0 });
      }
    }
    if (Array.isArray(n.args) || isNode(n.args)) walk(n.args);
  };
  walk(ast);
  return out.sort((a, b) => a.pos - b.pos);
}

/** The 1-based column of a CEL error, if it carries one (else 1). */
export function celErrorColumn(err: unknown): number {
  const node = (err as { node?: { pos?: unknown } } | undefined)?.node;
  return typeof node?.pos === 'number' ? node.pos + 1 : 1;
}

/** The first line of a CEL error's message. */
export function celErrorSummary(err: unknown): string {
  const e = err as { summary?: unknown; message?: unknown };
  return String(e.summary ?? e.message ?? 'invalid expression').split('\n')[0] as string;
}

/** A number a CEL result stands for: a number, an int (bigint), or a bool as 1/0; else `undefined`. */
export function celNumber(v: unknown): number | undefined {
  if (typeof v === 'number') return v;
  if (typeof v === 'boolean') return v ? 1 : 0;
  if (typeof v === 'bigint') return Number(v);
  return undefined;
}

/** A compiled expression, or why it does not compile (message and 1-based column). */
export type CelCompiled =
  | { readonly ok: true; readonly run: (vars: Record<string, unknown>) => unknown; readonly ast: unknown }
  | { readonly ok: false; readonly message: string; readonly column: number };

/**
 * Parses and type-checks `source` once.
 * @param types the result types accepted (`dyn` is always accepted: a map's value is checked when it runs).
 */
export function compileCel(env: Environment, source: string, types: readonly string[]): CelCompiled {
  try {
    const expr = env.parse(source);
    const checked = expr.check();
    if (!checked.valid)
      return { ok: false, message: celErrorSummary(checked.error), column: celErrorColumn(checked.error) };
    const type = checked.type ?? 'unknown';
    if (type !== 'dyn' && !types.includes(type))
      return { ok: false, message: `the expression must be ${types.join(' or ')}, not ${type}`, column: 1 };
    return { ok: true, run: (vars) => expr(vars) as unknown, ast: expr.ast };
  } catch (err) {
    return { ok: false, message: celErrorSummary(err), column: celErrorColumn(err) };
  }
}
