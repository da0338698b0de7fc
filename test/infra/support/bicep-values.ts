/**
 * Every value a Bicep expression can take, for the settings checks: where the evaluator of bicep-reader.ts gives
 * one value or none, this walks ternaries (both branches), object tables indexed by a param (every entry), property
 * access, comparisons (true and false), `string(...)` and interpolation, and says when a value is known only at
 * deployment (a resource's runtime property, a module output built from one, a param without a default). An
 * expression outside that subset is `unknown`: the checks fail on it instead of passing without checking.
 * @module
 */
import { matchBracket, objectProperties, stringLiteral } from './bicep-text';
import { moduleScope, property, type Scope } from './bicep-reader';

/** A value: a scalar, or an object literal (its properties' expressions, evaluated in `scope`). */
export type BicepAny =
  string | number | boolean | { readonly object: ReadonlyMap<string, string>; readonly scope: Scope };

/** What an expression can be: some values, a deployment-time value, or something the walker cannot read. */
export type Outcome =
  | { readonly kind: 'values'; readonly values: readonly BicepAny[] }
  | { readonly kind: 'runtime'; readonly why: string }
  | { readonly kind: 'unknown'; readonly expr: string };

const MAX_VALUES = 64;
const values = (vs: readonly BicepAny[]): Outcome => ({ kind: 'values', values: vs.slice(0, MAX_VALUES) });

/** Combines outcomes: unknown wins, then runtime, else the union of values. */
function union(outcomes: readonly Outcome[]): Outcome {
  const unknown = outcomes.find((o) => o.kind === 'unknown');
  if (unknown !== undefined) return unknown;
  const runtime = outcomes.find((o) => o.kind === 'runtime');
  if (runtime !== undefined) return runtime;
  return values(outcomes.flatMap((o) => (o.kind === 'values' ? o.values : [])));
}

/** Index of the top-level `?` of a ternary and its `:`, skipping strings and brackets; undefined if none. */
function ternary(e: string): { q: number; c: number } | undefined {
  let depth = 0;
  let q = -1;
  let nested = 0;
  for (let i = 0; i < e.length; i++) {
    const ch = e[i] as string;
    if (ch === "'") {
      i = e.indexOf("'", i + 1);
      if (i < 0) return undefined;
    } else if ('([{'.includes(ch)) depth++;
    else if (')]}'.includes(ch)) depth--;
    else if (depth === 0 && ch === '?') {
      if (q < 0) q = i;
      else nested++;
    } else if (depth === 0 && ch === ':' && q >= 0) {
      if (nested === 0) return { q, c: i };
      nested--;
    }
  }
  return undefined;
}

const isObject = (v: BicepAny): v is Extract<BicepAny, { object: unknown }> => typeof v === 'object';

/** Every value `expr` can take in `scope`. */
export function outcomes(expr: string, scope: Scope): Outcome {
  const e = expr.trim().replace(/!(?=\.)/g, ''); // `x!.y`: the non-null assertion changes no value
  const runtime = runtimeReference(e, scope);
  if (runtime !== undefined) return { kind: 'runtime', why: runtime };
  if (/^-?\d+$/.test(e)) return values([Number(e)]);
  if (e === 'true' || e === 'false') return values([e === 'true']);
  if (e.startsWith('(') && matchBracket(e, 0) === e.length - 1) return outcomes(e.slice(1, -1), scope);
  const t = ternary(e);
  if (t !== undefined) {
    // a condition known with the params at their defaults picks its branch; else both branches
    const cond = comparison(e.slice(0, t.q), scope);
    const then = outcomes(e.slice(t.q + 1, t.c), scope);
    const otherwise = outcomes(e.slice(t.c + 1), scope);
    return cond === true ? then : cond === false ? otherwise : union([then, otherwise]);
  }
  if (/^[^']*(==|!=|>=|<=|>|<|&&|\|\|)/.test(e) && !e.startsWith('{')) {
    const c = comparison(e, scope);
    return values(c === undefined ? [true, false] : [c]);
  }
  if (e.startsWith("'")) return interpolated(e, scope);
  if (e.startsWith('{')) return values([{ object: objectProperties(e), scope }]);
  const str = /^string\((.*)\)$/s.exec(e);
  if (str !== null) {
    const inner = outcomes(str[1] as string, scope);
    return inner.kind !== 'values' ? inner : values(inner.values.map((v) => (isObject(v) ? '[object]' : String(v))));
  }
  const out = /^([A-Za-z_]\w*)\.outputs\.([A-Za-z_]\w*)$/.exec(e);
  if (out !== null) {
    const inner = moduleScope(scope, out[1] as string);
    const o = inner.file.outputs.get(out[2] as string);
    return o === undefined ? { kind: 'unknown', expr: e } : outcomes(o, inner);
  }
  const access = /^([A-Za-z_]\w*)((?:\.[A-Za-z_]\w*|\[[^\]]+\])+)$/.exec(e);
  if (access !== null) return accessed(access[1] as string, access[2] as string, scope, e);
  if (/^[A-Za-z_]\w*$/.test(e)) return symbol(e, scope);
  return { kind: 'unknown', expr: e };
}

/** A reference to a resource's runtime property (`<resource>.properties…`, `<resource>.id`) anywhere in `e`. */
function runtimeReference(e: string, scope: Scope): string | undefined {
  for (const r of scope.file.resources) {
    const m = new RegExp(`\\b${r.symbol}\\.(properties|id)\\b`).exec(e);
    if (m !== null) return `${r.symbol}.${m[1] as string}`;
  }
  return undefined;
}

/** `a OP b` with one value on each side (params at their defaults): its truth; else undefined. */
function comparison(e: string, scope: Scope): boolean | undefined {
  const m = /^(.*?)\s*(==|!=|>=|<=|>|<)\s*(.*)$/s.exec(e.trim());
  if (m === null) {
    const o = outcomes(e, scope);
    return o.kind === 'values' && o.values.length === 1 && typeof o.values[0] === 'boolean' ? o.values[0] : undefined;
  }
  const [a, b] = [outcomes(m[1] as string, scope), outcomes(m[3] as string, scope)];
  if (a.kind !== 'values' || b.kind !== 'values' || a.values.length !== 1 || b.values.length !== 1) return undefined;
  const [x, y] = [a.values[0], b.values[0]];
  if (typeof x === 'object' || typeof y === 'object' || x === undefined || y === undefined) return undefined;
  switch (m[2]) {
    case '==':
      return x === y;
    case '!=':
      return x !== y;
    case '>=':
      return x >= y;
    case '<=':
      return x <= y;
    case '>':
      return x > y;
    default:
      return x < y;
  }
}

/** A param, var or bound param by name. */
function symbol(name: string, scope: Scope): Outcome {
  const b = scope.bound.get(name);
  if (b !== undefined) {
    const v = b();
    return v === undefined ? { kind: 'runtime', why: `module param ${name}` } : values([v]);
  }
  const v = scope.file.vars.get(name);
  if (v !== undefined) return outcomes(v, scope);
  const p = scope.file.params.get(name);
  if (p !== undefined)
    return p.defaultExpr === undefined ? { kind: 'runtime', why: `param ${name}` } : outcomes(p.defaultExpr, scope);
  return { kind: 'unknown', expr: name };
}

/** `base.a[b].c`: a resource's runtime property, or the properties of every object `base` can be. */
function accessed(base: string, path: string, scope: Scope, whole: string): Outcome {
  const resource = scope.file.resources.find((r) => r.symbol === base);
  if (resource !== undefined) {
    if (path === '.name') {
      const n = property(resource.body, 'name');
      return n === undefined ? { kind: 'unknown', expr: whole } : outcomes(n, scope);
    }
    return { kind: 'runtime', why: `${base}${path}` };
  }
  let cur = symbol(base, scope);
  for (const step of path.match(/\.[A-Za-z_]\w*|\[[^\]]+\]/g) ?? []) {
    if (cur.kind !== 'values') return cur;
    const next: Outcome[] = [];
    for (const v of cur.values) {
      if (!isObject(v)) return { kind: 'unknown', expr: whole };
      if (step.startsWith('.')) {
        const p = v.object.get(step.slice(1));
        next.push(p === undefined ? { kind: 'unknown', expr: whole } : outcomes(p, v.scope));
      } else for (const p of v.object.values()) next.push(outcomes(p, v.scope)); // a table: every entry
    }
    cur = union(next);
  }
  return cur;
}

/** A string literal with `${...}` parts: every combination of their values (bounded). */
function interpolated(e: string, scope: Scope): Outcome {
  const lit = stringLiteral(e);
  if (lit !== undefined) return values([lit]);
  let acc: string[] = [''];
  const body = e.slice(1, -1);
  for (let i = 0; i < body.length;) {
    if (body.startsWith('${', i)) {
      const end = matchBracket(body, i + 1);
      const part = outcomes(body.slice(i + 2, end), scope);
      if (part.kind !== 'values') return part;
      acc = acc.flatMap((a) => part.values.map((v) => a + String(v))).slice(0, MAX_VALUES);
      i = end + 1;
    } else {
      const ch = body[i] as string;
      acc = acc.map((a) => a + ch);
      i++;
    }
  }
  return values(acc);
}
