/**
 * The route contracts as JSON Schema, and TypeScript types written from it: what the console's generated module
 * (console/src/api-contract.ts) and the reference page (docs/api-reference.md) are made of. A small emitter for the
 * JSON Schema zod writes (draft-07: objects, arrays, unions, enums, nullables, records, `$ref` to `definitions`).
 */
import type { Contract } from '../http/contract';
import { jsonSchemaOf } from '../http/contract';

/** A JSON Schema node. */
export type Schema = Readonly<Record<string, unknown>>;

/** One contract's parts as JSON Schema (absent: the route has none). */
export interface ContractSchemas {
  readonly contract: Contract;
  readonly params?: Schema;
  readonly query?: Schema;
  readonly body?: Schema;
  readonly response?: Schema;
  /** The errors' body, when the route declares its own (not problem+json). */
  readonly error?: Schema;
}

/** Every contract's schemas, and the named types they share (`definitions`, by name). */
export interface SchemaSet {
  readonly routes: readonly ContractSchemas[];
  readonly definitions: ReadonlyMap<string, Schema>;
}

/** The contracts' schemas, their named parts gathered (a name must mean one schema). */
export function schemaSet(contracts: readonly Contract[]): SchemaSet {
  const definitions = new Map<string, Schema>();
  const take = (s: ReturnType<typeof jsonSchemaOf>): Schema => {
    const { definitions: defs, $schema: _drop, ...rest } = s as { definitions?: Record<string, Schema> } & Schema;
    for (const [name, d] of Object.entries(defs ?? {})) {
      const known = definitions.get(name);
      if (known !== undefined && JSON.stringify(known) !== JSON.stringify(d))
        throw new Error(`two different schemas are named ${name}`);
      definitions.set(name, d);
    }
    return rest;
  };
  const routes = contracts.map((c) => ({
    contract: c,
    ...(c.params === undefined ? {} : { params: take(jsonSchemaOf(c.params, 'input')) }),
    ...(c.query === undefined ? {} : { query: take(jsonSchemaOf(c.query, 'input')) }),
    ...(c.body === undefined ? {} : { body: take(jsonSchemaOf(c.body, 'input')) }),
    ...(c.response === undefined ? {} : { response: take(jsonSchemaOf(c.response)) }),
    ...(c.error === undefined ? {} : { error: take(jsonSchemaOf(c.error)) }),
  }));
  return { routes, definitions: new Map([...definitions].sort(([a], [b]) => a.localeCompare(b))) };
}

const IDENT = /^[A-Za-z_$][\w$]*$/;
const key = (k: string): string => (IDENT.test(k) ? k : JSON.stringify(k));
const asArray = (v: unknown): readonly Schema[] => (Array.isArray(v) ? (v as Schema[]) : []);

/** A JSDoc comment of `text` at `indent` (empty when there is none). */
export function doc(text: unknown, indent: string): string {
  if (typeof text !== 'string' || text === '') return '';
  return `${indent}/** ${text.replaceAll('*/', '*\\/')} */\n`;
}

function objectType(s: Schema, indent: string): string {
  const props = (s['properties'] ?? {}) as Record<string, Schema>;
  const required = new Set(asArray(s['required']) as unknown as string[]);
  const extra = s['additionalProperties'];
  const entries = Object.entries(props);
  const inner = `${indent}  `;
  const lines = entries.map(
    ([k, v]) =>
      `${doc(v['description'], inner)}${inner}readonly ${key(k)}${required.has(k) ? '' : '?'}: ${tsType(v, inner)};`,
  );
  if (extra !== false && extra !== undefined) {
    const value = extra === true ? 'unknown' : tsType(extra as Schema, inner);
    if (entries.length === 0) return `{ readonly [key: string]: ${value} }`;
    lines.push(`${inner}readonly [key: string]: ${value === 'unknown' ? value : `${value} | undefined`};`);
  }
  if (lines.length === 0) return '{}';
  return `{\n${lines.join('\n')}\n${indent}}`;
}

/** The TypeScript type of a JSON Schema node (named parts by their names). */
export function tsType(s: Schema, indent = ''): string {
  const ref = s['$ref'];
  if (typeof ref === 'string') return ref.replace(/^#\/definitions\//, '');
  const allOf = asArray(s['allOf']);
  if (allOf.length === 1 && allOf[0] !== undefined) return tsType(allOf[0], indent);
  const anyOf = asArray(s['anyOf'] ?? s['oneOf']);
  if (anyOf.length > 0) return anyOf.map((p) => tsType(p, indent)).join(' | ');
  if (Array.isArray(s['enum'])) return (s['enum'] as unknown[]).map((v) => JSON.stringify(v)).join(' | ');
  if ('const' in s) return JSON.stringify(s['const']);
  const type = s['type'];
  if (Array.isArray(type)) return (type as string[]).map((t) => tsType({ ...s, type: t }, indent)).join(' | ');
  switch (type) {
    case 'string':
      return 'string';
    case 'number':
    case 'integer':
      return 'number';
    case 'boolean':
      return 'boolean';
    case 'null':
      return 'null';
    case 'array': {
      const item = tsType((s['items'] ?? {}) as Schema, indent);
      return /^[\w.]+$/.test(item) ? `readonly ${item}[]` : `readonly (${item})[]`;
    }
    case 'object':
      return objectType(s, indent);
    default:
      return 'unknown';
  }
}
