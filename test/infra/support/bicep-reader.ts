/**
 * A small reader for the regular subset of Bicep used in infra-bicep/: top-level `param`, `var`,
 * `resource`, `module` and `output` declarations (each starting a line), object and array literals, app
 * settings as `{ name: '<literal>' value: ... }` objects combined with `concat(...)`, and a tiny evaluator
 * for literals, `string(x)`, interpolation, params/vars, `module.outputs.x` and `resource.name`.
 * Anything outside that subset is reported as unsupported rather than guessed. `az bicep build` stays the
 * real check (in Azure tooling).
 * @module
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import {
  callArgs,
  arrayItems,
  expressionEnd,
  matchBracket,
  objectProperties,
  stringLiteral,
  stripComments,
} from './bicep-text';

/** A `resource` or `module` declaration. */
export interface BicepDeclaration {
  readonly symbol: string;
  /** `Type@apiVersion` for a resource, the relative path for a module. */
  readonly target: string;
  /** The `if (...)` condition text, if any. */
  readonly condition: string | undefined;
  /** The `for x in y:` loop header, if any. */
  readonly loop: string | undefined;
  /** The object body text `{ ... }`. */
  readonly body: string;
}

/** A parsed Bicep file. */
export interface BicepFile {
  readonly file: string;
  readonly params: ReadonlyMap<string, { readonly type: string; readonly defaultExpr: string | undefined }>;
  readonly vars: ReadonlyMap<string, string>;
  readonly resources: readonly BicepDeclaration[];
  readonly modules: readonly BicepDeclaration[];
  readonly outputs: ReadonlyMap<string, string>;
}

/** One app setting object: its literal name and its value expression (or `secretRef`). */
export interface AppSetting {
  readonly name: string;
  readonly value: string | undefined;
  readonly secretRef: string | undefined;
}

const DECL = /^(param|var|output|resource|module)\s+([A-Za-z_][A-Za-z0-9_]*)\b/gm;

/** Parses Bicep source text (comments stripped first). */
export function parseBicep(source: string, file = '<text>'): BicepFile {
  const text = stripComments(source);
  const params = new Map<string, { type: string; defaultExpr: string | undefined }>();
  const vars = new Map<string, string>();
  const outputs = new Map<string, string>();
  const resources: BicepDeclaration[] = [];
  const modules: BicepDeclaration[] = [];
  for (const m of text.matchAll(DECL)) {
    const kind = m[1] as string;
    const symbol = m[2] as string;
    const after = (m.index ?? 0) + m[0].length;
    if (kind === 'param') {
      const p = /^\s+([A-Za-z_][A-Za-z0-9_]*)[ \t]*(=)?/.exec(text.slice(after));
      if (p === null) throw new Error(`${file}: param ${symbol} has no type`);
      const start = after + p[0].length;
      params.set(symbol, {
        type: p[1] as string,
        defaultExpr: p[2] === undefined ? undefined : text.slice(start, expressionEnd(text, start)).trim(),
      });
    } else if (kind === 'var' || kind === 'output') {
      const eq = text.indexOf('=', after);
      const end = expressionEnd(text, eq + 1);
      (kind === 'var' ? vars : outputs).set(symbol, text.slice(eq + 1, end).trim());
    } else {
      const head = /^\s+'([^']+)'(?:\s+existing)?\s*=\s*(?:if\s*(\([^\n]*?\))\s*)?(\[\s*for\s+[^\n:]+:\s*)?\{/.exec(
        text.slice(after),
      );
      if (head === null) throw new Error(`${file}: unsupported ${kind} declaration ${symbol}`);
      const open = after + head[0].length - 1;
      const body = text.slice(open, matchBracket(text, open) + 1);
      const decl = { symbol, target: head[1] as string, condition: head[2], loop: head[3]?.trim(), body };
      (kind === 'resource' ? resources : modules).push(decl);
    }
  }
  return { file, params, vars, resources, modules, outputs };
}

/** Reads and parses a Bicep file. */
export function readBicep(file: string): BicepFile {
  return parseBicep(readFileSync(file, 'utf8'), file);
}

/** The top-level property `key` of a declaration body, or a nested one via a dotted path (`properties.x`). */
export function property(objectText: string, dottedPath: string): string | undefined {
  let cur: string | undefined = objectText;
  for (const key of dottedPath.split('.')) {
    if (cur === undefined || !cur.trim().startsWith('{')) return undefined;
    cur = objectProperties(cur).get(key);
  }
  return cur;
}

/**
 * The app setting objects an expression yields: array literals of `{ name: '...' value|secretRef: ... }`,
 * `concat(...)` of those, and identifiers naming a var (or, through `bound`, a module param).
 * @throws on any other form, naming it, so the Bicep stays readable by this reader.
 */
export function appSettings(
  expr: string,
  file: BicepFile,
  bound: ReadonlyMap<string, readonly AppSetting[]> = new Map(),
): AppSetting[] {
  const e = expr.trim();
  if (e.startsWith('[')) {
    return arrayItems(e).flatMap((item) => {
      if (!item.startsWith('{')) return appSettings(item, file, bound);
      const props = objectProperties(item);
      const name = stringLiteral(props.get('name') ?? '');
      if (name === undefined) throw new Error(`${file.file}: app setting without a literal name: ${item.slice(0, 80)}`);
      return [{ name, value: props.get('value'), secretRef: props.get('secretRef') }];
    });
  }
  if (/^concat\s*\(/.test(e)) return callArgs(e).flatMap((a) => appSettings(a, file, bound));
  const b = bound.get(e);
  if (b !== undefined) return [...b];
  const v = file.vars.get(e);
  if (v !== undefined) return appSettings(v, file, bound);
  throw new Error(`${file.file}: unsupported app settings expression: ${e.slice(0, 80)}`);
}

/**
 * Where a module consumes its `appSettings` param: the first `concat(appSettings, ...)` call in the file,
 * or the bare param. Returns the settings the running app receives.
 */
export function moduleAppSettings(moduleFile: BicepFile, passed: readonly AppSetting[]): AppSetting[] {
  const bound = new Map([['appSettings', passed]]);
  const text = [...moduleFile.vars.values(), ...moduleFile.resources.map((r) => r.body)].join('\n');
  const at = text.search(/concat\(\s*appSettings\s*,/);
  if (at < 0) return [...passed];
  return appSettings(text.slice(at, matchBracket(text, text.indexOf('(', at)) + 1), moduleFile, bound);
}

/** A value the evaluator could compute. */
export type BicepValue = string | number | boolean;

/** Evaluation scope: a file, values bound to its params (module calls), and how to load a module. */
export interface Scope {
  readonly file: BicepFile;
  readonly bound: ReadonlyMap<string, () => BicepValue | undefined>;
}

/** Scope of a file with every param at its default. */
export function fileScope(file: BicepFile): Scope {
  return { file, bound: new Map() };
}

/** Scope of a module as called by `symbol` in `parent` (params bound to the caller's expressions). */
export function moduleScope(parent: Scope, symbol: string): Scope {
  const decl = parent.file.modules.find((m) => m.symbol === symbol);
  if (decl === undefined) throw new Error(`${parent.file.file}: no module ${symbol}`);
  const file = readBicep(path.resolve(path.dirname(parent.file.file), decl.target));
  const params = property(decl.body, 'params');
  const bound = new Map<string, () => BicepValue | undefined>();
  for (const [k, v] of params === undefined ? [] : objectProperties(params)) bound.set(k, () => evaluate(v, parent));
  return { file, bound };
}

/**
 * Evaluates an expression when it is one of: a string/int/bool literal, an interpolated string, `string(x)`,
 * a param (bound or default) or var, `<module>.outputs.<name>`, `<resource>.name`. Else undefined.
 */
export function evaluate(expr: string, scope: Scope): BicepValue | undefined {
  const e = expr.trim();
  if (/^-?\d+$/.test(e)) return Number(e);
  if (e === 'true' || e === 'false') return e === 'true';
  if (e.startsWith("'") && e.endsWith("'") && expressionEnd(e, 0) === e.length) {
    const lit = stringLiteral(e);
    if (lit !== undefined) return lit;
    let out = '';
    const body = e.slice(1, -1);
    for (let i = 0; i < body.length;) {
      if (body.startsWith('${', i)) {
        const end = matchBracket(body, i + 1);
        const v = evaluate(body.slice(i + 2, end), scope);
        if (v === undefined) return undefined;
        out += String(v);
        i = end + 1;
      } else out += body[i++];
    }
    return out;
  }
  const str = /^string\((.*)\)$/s.exec(e);
  if (str !== null) {
    const v = evaluate(str[1] as string, scope);
    return v === undefined ? undefined : String(v);
  }
  const out = /^([A-Za-z_]\w*)\.outputs\.([A-Za-z_]\w*)$/.exec(e);
  if (out !== null) {
    const inner = moduleScope(scope, out[1] as string);
    const o = inner.file.outputs.get(out[2] as string);
    return o === undefined ? undefined : evaluate(o, inner);
  }
  const res = /^([A-Za-z_]\w*)\.name$/.exec(e);
  if (res !== null) {
    const r = scope.file.resources.find((d) => d.symbol === res[1]);
    const n = r === undefined ? undefined : property(r.body, 'name');
    return n === undefined ? undefined : evaluate(n, scope);
  }
  if (/^[A-Za-z_]\w*$/.test(e)) {
    const b = scope.bound.get(e);
    if (b !== undefined) return b();
    const v = scope.file.vars.get(e);
    if (v !== undefined) return evaluate(v, scope);
    const p = scope.file.params.get(e);
    if (p?.defaultExpr !== undefined) return evaluate(p.defaultExpr, scope);
  }
  return undefined;
}
