/**
 * ASP.NET-style route templates as used by Azure Functions http triggers
 * (`route: 'models/{name}/promote'`), and a route table with host-like precedence.
 *
 * Supported: literal segments (case-insensitive), `{param}`, optional `{param?}`, defaults
 * `{param=value}`, constraints `{id:int}`, `{v:int:min(1)}`, `{s:regex(^a+$)}`, catch-all
 * `{*rest}` / `{**rest}`, and complex segments such as `{name}.{ext}`.
 *
 * @module
 */

import { type RouteConstraint, RouteTemplateError, makeConstraint } from './route-constraints';

export { type RouteConstraint, RouteTemplateError } from './route-constraints';

/** A piece of a route segment. */
export type RoutePart =
  | { kind: 'literal'; text: string }
  | {
      kind: 'param';
      name: string;
      optional: boolean;
      catchAll: boolean;
      defaultValue?: string;
      constraints: RouteConstraint[];
    };

/** A parsed route template. */
export interface RouteTemplate {
  template: string;
  segments: RoutePart[][];
  paramNames: string[];
}

/** Parses `name:c1:c2(args)=default?` (the inside of `{...}`). */
function parseParam(body: string, template: string): RoutePart {
  let rest = body;
  let catchAll = false;
  const star = /^\*{1,2}/.exec(rest);
  if (star) {
    catchAll = true;
    rest = rest.slice(star[0].length);
  }
  const nameMatch = /^[^:=?]+/.exec(rest);
  if (!nameMatch) throw new RouteTemplateError(`Missing parameter name in "${template}"`);
  const name = nameMatch[0].trim();
  rest = rest.slice(nameMatch[0].length);
  const constraints: RouteConstraint[] = [];
  while (rest.startsWith(':')) {
    const cname = /^:([A-Za-z]+)/.exec(rest);
    if (!cname?.[1]) throw new RouteTemplateError(`Bad constraint in "${template}"`);
    rest = rest.slice(cname[0].length);
    let args: string[] = [];
    if (rest.startsWith('(')) {
      let depth = 0;
      let i = 0;
      for (; i < rest.length; i++) {
        if (rest[i] === '(') depth++;
        else if (rest[i] === ')' && --depth === 0) break;
      }
      if (depth !== 0) throw new RouteTemplateError(`Unbalanced parentheses in "${template}"`);
      const inner = rest.slice(1, i);
      args = cname[1].toLowerCase() === 'regex' ? [inner] : inner.split(',').map((s) => s.trim());
      rest = rest.slice(i + 1);
    }
    constraints.push(makeConstraint(cname[1], args));
  }
  let optional = false;
  if (rest.endsWith('?')) {
    optional = true;
    rest = rest.slice(0, -1);
  }
  let defaultValue: string | undefined;
  if (rest.startsWith('=')) {
    defaultValue = rest.slice(1);
    rest = '';
  }
  if (rest !== '') throw new RouteTemplateError(`Unexpected "${rest}" in parameter of "${template}"`);
  return defaultValue === undefined
    ? { kind: 'param', name, optional, catchAll, constraints }
    : { kind: 'param', name, optional, catchAll, defaultValue, constraints };
}

function parseSegment(segment: string, template: string): RoutePart[] {
  const parts: RoutePart[] = [];
  let literal = '';
  for (let i = 0; i < segment.length; i++) {
    const ch = segment[i];
    if ((ch === '{' || ch === '}') && segment[i + 1] === ch) {
      literal += ch;
      i++;
    } else if (ch === '{') {
      let depth = 0;
      let j = i + 1;
      for (; j < segment.length; j++) {
        if (segment[j] === '(') depth++;
        else if (segment[j] === ')') depth--;
        else if (segment[j] === '}' && depth <= 0) break;
      }
      if (j >= segment.length) throw new RouteTemplateError(`Unclosed "{" in "${template}"`);
      if (literal) parts.push({ kind: 'literal', text: literal });
      literal = '';
      const inner = segment
        .slice(i + 1, j)
        .replace(/\{\{/g, '{')
        .replace(/\}\}/g, '}');
      parts.push(parseParam(inner, template));
      i = j;
    } else if (ch === '}') {
      throw new RouteTemplateError(`Unmatched "}" in "${template}"`);
    } else {
      literal += ch;
    }
  }
  if (literal) parts.push({ kind: 'literal', text: literal });
  return parts;
}

/** Parses a route template (leading/trailing `/` and a leading `~/` are ignored). */
export function parseRouteTemplate(template: string): RouteTemplate {
  const trimmed = template.replace(/^~?\/+/, '').replace(/\/+$/, '');
  const segments = trimmed === '' ? [] : trimmed.split('/').map((s) => parseSegment(s, template));
  const paramNames: string[] = [];
  segments.forEach((parts, i) => {
    if (parts.length === 0) throw new RouteTemplateError(`Empty segment in "${template}"`);
    for (const p of parts) {
      if (p.kind !== 'param') continue;
      if (paramNames.some((n) => n.toLowerCase() === p.name.toLowerCase())) {
        throw new RouteTemplateError(`Duplicate parameter "${p.name}" in "${template}"`);
      }
      paramNames.push(p.name);
      if (p.catchAll && (i !== segments.length - 1 || parts.length > 1)) {
        throw new RouteTemplateError(`Catch-all "${p.name}" must be the whole last segment of "${template}"`);
      }
    }
  });
  return { template, segments, paramNames };
}

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function checkParam(p: Extract<RoutePart, { kind: 'param' }>, value: string, out: Record<string, string>): boolean {
  if (!p.constraints.every((c) => c.test(value))) return false;
  out[p.name] = value;
  return true;
}

/** Whether a template segment may be absent from the path. */
function canBeOmitted(parts: RoutePart[]): boolean {
  const p = parts[0];
  return parts.length === 1 && p?.kind === 'param' && (p.optional || p.catchAll || p.defaultValue !== undefined);
}

/**
 * Matches decoded path segments (without the route prefix) against a template.
 * @returns the route parameters, or `undefined` if it doesn't match
 */
export function matchRouteTemplate(t: RouteTemplate, path: string[]): Record<string, string> | undefined {
  const params: Record<string, string> = {};
  for (let i = 0; i < t.segments.length; i++) {
    const parts = t.segments[i] ?? [];
    const first = parts[0];
    if (parts.length === 1 && first?.kind === 'param' && first.catchAll) {
      const rest = path.slice(i).join('/');
      if (rest === '') {
        if (first.defaultValue !== undefined) params[first.name] = first.defaultValue;
        return params;
      }
      return checkParam(first, rest, params) ? params : undefined;
    }
    const value = path[i];
    if (value === undefined) {
      if (!canBeOmitted(parts)) return undefined;
      if (first?.kind === 'param' && first.defaultValue !== undefined) params[first.name] = first.defaultValue;
      continue;
    }
    if (parts.length === 1 && first?.kind === 'literal') {
      if (first.text.toLowerCase() !== value.toLowerCase()) return undefined;
    } else if (parts.length === 1 && first?.kind === 'param') {
      if (value === '' || !checkParam(first, value, params)) return undefined;
    } else {
      const source = parts.map((p) => (p.kind === 'literal' ? escapeRegExp(p.text) : p.optional ? '(.*?)' : '(.+?)'));
      const m = new RegExp(`^${source.join('')}$`, 'i').exec(value);
      if (!m) return undefined;
      let g = 1;
      for (const p of parts) {
        if (p.kind !== 'param') continue;
        const v = m[g++] ?? '';
        if (v === '' && p.defaultValue !== undefined) params[p.name] = p.defaultValue;
        else if (v !== '' && !checkParam(p, v, params)) return undefined;
      }
    }
  }
  return path.length > t.segments.length ? undefined : params;
}

/** Host-like precedence digits per segment (lower wins): literal < complex < constrained < param < catch-all. */
function precedence(t: RouteTemplate): number[] {
  return t.segments.map((parts) => {
    const p = parts[0];
    if (parts.length > 1) return 2;
    if (p?.kind === 'literal') return 1;
    if (p?.kind === 'param' && p.catchAll) return p.constraints.length > 0 ? 5 : 6;
    return p?.kind === 'param' && p.constraints.length > 0 ? 3 : 4;
  });
}

function comparePrecedence(a: number[], b: number[]): number {
  for (let i = 0; i < Math.max(a.length, b.length); i++) {
    const d = (a[i] ?? 0) - (b[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** A route table entry. */
export interface RouteEntry<T> {
  template: RouteTemplate;
  /** Upper-case methods; empty = any method. */
  methods: string[];
  target: T;
}

/** Result of {@link RouteTable.match}. */
export type RouteMatch<T> =
  | { kind: 'match'; target: T; params: Record<string, string>; entry: RouteEntry<T> }
  | { kind: 'method-not-allowed'; allow: string[] }
  | { kind: 'not-found' };

/** Ordered set of routes; the most specific matching template wins, then registration order. */
export class RouteTable<T> {
  #entries: { entry: RouteEntry<T>; prec: number[]; order: number }[] = [];

  /** Adds a route; throws {@link RouteTemplateError} for an invalid template. */
  add(template: string, methods: readonly string[] | undefined, target: T): RouteEntry<T> {
    const parsed = parseRouteTemplate(template);
    const entry: RouteEntry<T> = { template: parsed, methods: (methods ?? []).map((m) => m.toUpperCase()), target };
    this.#entries.push({ entry, prec: precedence(parsed), order: this.#entries.length });
    this.#entries.sort((x, y) => comparePrecedence(x.prec, y.prec) || x.order - y.order);
    return entry;
  }

  /** All entries, in matching order. */
  get entries(): RouteEntry<T>[] {
    return this.#entries.map((e) => e.entry);
  }

  /** Finds the route for a method and decoded path segments (route prefix already removed). */
  match(method: string, path: string[]): RouteMatch<T> {
    const upper = method.toUpperCase();
    const allow = new Set<string>();
    for (const { entry } of this.#entries) {
      const params = matchRouteTemplate(entry.template, path);
      if (!params) continue;
      if (entry.methods.length === 0 || entry.methods.includes(upper)) {
        return { kind: 'match', target: entry.target, params, entry };
      }
      entry.methods.forEach((m) => allow.add(m));
    }
    return allow.size > 0 ? { kind: 'method-not-allowed', allow: [...allow].sort() } : { kind: 'not-found' };
  }
}
