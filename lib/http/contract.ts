/**
 * A route's contract: its name, method, route template, auth level, path parameters, query, body and response, each
 * declared once as a zod schema (the declarations are in lib/contracts). {@link compileContract} turns one into what
 * the route runs: the body's validator (zod: every invalid field named, `validation_failed`), the query's names
 * check (an unknown or repeated parameter refused) and the response's serializer (`fast-json-stringify` of the
 * response's JSON Schema). The console's types and client (console/src/api-contract.ts) and the API reference page
 * (docs/api-reference.md) are generated from the same declarations (scripts/write-contracts.ts).
 * @module
 */
import fastJson from 'fast-json-stringify';
import { z } from 'zod';
import { AppError, type FieldError } from '../errors/errors';
import { inputFieldErrorsOf } from '../errors/field-errors';

/** The methods a route answers. */
export type Method = 'GET' | 'POST' | 'PUT' | 'DELETE';

/**
 * Who may call: `function` (a function key), `admin` (the host's master key), `anonymous`, or `people`: the routes
 * people call from the console (`function`, or `anonymous` behind Easy Auth: the adapter resolves it).
 */
export type Auth = 'anonymous' | 'function' | 'admin' | 'people';

/** Another answer than the success one a route may give (for the reference page). */
export interface OtherAnswer {
  readonly status: number;
  readonly description: string;
}

/** One route's declarations. */
export interface Contract<
  Body extends z.ZodType | undefined = z.ZodType | undefined,
  Res extends z.ZodType | undefined = z.ZodType | undefined,
  Err extends z.ZodType | undefined = z.ZodType | undefined,
> {
  /** The function's name (unique), also the console client's name of the route. */
  readonly name: string;
  readonly method: Method;
  /** The route template under `/api`, e.g. `cases/{id}/notes`. */
  readonly route: string;
  readonly auth: Auth;
  /** One line for the reference page. */
  readonly summary: string;
  /** The route template's parameters, each a string described (the service checks the value: 404 when bad). */
  readonly params?: z.ZodObject;
  /** The query parameters the route reads (optional strings); any other is refused. */
  readonly query?: z.ZodObject;
  /**
   * The service checks the query's names as it checks their values, naming every bad one in one problem (the case
   * list): the route does not refuse unknown names first. A test holds the service's names to the contract's.
   */
  readonly serviceChecksQuery?: boolean;
  /** The JSON body's schema; absent: the route reads no body. */
  readonly body?: Body;
  /** The body may be absent (empty): the handler then gets `undefined`. */
  readonly bodyOptional?: boolean;
  /** Largest accepted body, bytes (a handler may pass a configured one instead). */
  readonly bodyLimitBytes?: number;
  /** The success status. */
  readonly status: number;
  /** The success answer's schema; absent: no body. */
  readonly response?: Res;
  /** Other answers the route gives on success paths (e.g. 204 when nothing matched). */
  readonly otherAnswers?: readonly OtherAnswer[];
  /**
   * The answer is written by `JSON.stringify`, not by a serializer compiled from `response` (which then only
   * documents it): for answers of large numeric arrays that may hold non-finite numbers (written as `null`).
   */
  readonly jsonStringify?: boolean;
  /**
   * The errors' body, when it is not a problem document: a protocol's own error shape (the route is registered with
   * that protocol's error writer, e.g. `oipRoute` of lib/oip/oip-http.ts), and the body of the error answers its
   * handler gives itself (a `Reply` with `error`). Absent: problem+json.
   */
  readonly error?: Err;
}

/** Declares a contract (the identity: keeps the literal types of its schemas). */
export function defineContract<
  Body extends z.ZodType | undefined,
  Res extends z.ZodType | undefined,
  Err extends z.ZodType | undefined = undefined,
>(c: Contract<Body, Res, Err>): Contract<Body, Res, Err> {
  return c;
}

/** The body type a contract's validator gives. */
export type BodyOf<C> =
  C extends Contract<infer B, z.ZodType | undefined> ? (B extends z.ZodType ? z.output<B> : undefined) : never;

/**
 * A schema's type as the serializer takes it: arrays may be read-only, and an open object (a record) may be any
 * object (the services answer with their own interfaces, which TypeScript does not let stand for records).
 */
export type Wire<T> = T extends readonly (infer U)[]
  ? readonly Wire<U>[]
  : T extends object
    ? string extends keyof T
      ? object
      : { readonly [K in keyof T]: Wire<T[K]> }
    : T;

/** The response type a contract's serializer takes. */
export type ResponseOf<C> =
  C extends Contract<z.ZodType | undefined, infer R> ? (R extends z.ZodType ? Wire<z.input<R>> : undefined) : never;

/** The error body type a contract declares (`never`: problem+json only). */
export type ErrorOf<C> =
  C extends Contract<z.ZodType | undefined, z.ZodType | undefined, infer E>
    ? E extends z.ZodType
      ? Wire<z.input<E>>
      : never
    : never;

/** A request's query parameters, as the Functions `HttpRequest` has them (`URLSearchParams`). */
export interface QueryParams {
  get(name: string): string | null;
  /** Every parameter's name, once per occurrence (a repeated parameter is listed each time). */
  keys(): Iterable<string>;
}

/**
 * Errors for the parameters of `q` that are not in `known` (`unknown query parameter`) and for those given more
 * than once (`must be given once`), each named once, in the query's order. (Through the Functions host a repeated
 * parameter arrives once, its values joined by `,`: the route's own check refuses that value.)
 */
export function queryNameErrors(q: QueryParams, known: readonly string[]): FieldError[] {
  const seen = new Set<string>();
  const named = new Set<string>();
  const errors: FieldError[] = [];
  for (const k of q.keys()) {
    const problem = !known.includes(k)
      ? `unknown query parameter (this route reads ${known.join(', ')})`
      : seen.has(k)
        ? 'must be given once'
        : undefined;
    seen.add(k);
    if (problem === undefined || named.has(k)) continue;
    named.add(k);
    errors.push({ path: k, message: problem });
  }
  return errors;
}

/**
 * Parses `body` with `schema`.
 * @throws AppError `validation_failed` naming every bad field (`must be a JSON object` at the top when none is named).
 */
export function parseWithSchema<T>(schema: z.ZodType<T>, body: unknown): T {
  const r = schema.safeParse(body);
  if (r.success) return r.data;
  const errors = inputFieldErrorsOf(r.error.issues, body);
  throw new AppError('validation_failed', `${errors.length} invalid field(s).`, {
    errors: errors.length > 0 ? errors : [{ path: '', message: 'must be a JSON object' }],
  });
}

/** A schema's JSON Schema (draft-07, named parts under `definitions`), as the serializer and the generators read it. */
export function jsonSchemaOf(schema: z.ZodType, io: 'input' | 'output' = 'output'): Record<string, unknown> {
  return z.toJSONSchema(schema, { target: 'draft-07', io, unrepresentable: 'any' }) as Record<string, unknown>;
}

/** What a contract compiles to. */
export interface CompiledContract<C extends Contract> {
  readonly contract: C;
  /** The query's parameter names the route checks (empty: it does not check). */
  readonly queryNames: readonly string[];
  /** The body's validator. @throws AppError `validation_failed`. */
  parseBody(raw: unknown): BodyOf<C>;
  /** The response's serializer (only the declared properties are written). */
  serialize(value: ResponseOf<C>): string;
  /** The declared error body's serializer. */
  serializeError(value: ErrorOf<C>): string;
}

/** Compiles a contract once (at module load): its validator and its serializer. */
export function compileContract<C extends Contract>(contract: C): CompiledContract<C> {
  const body = contract.body;
  const response = contract.response;
  const stringify =
    response === undefined
      ? undefined
      : contract.jsonStringify === true
        ? JSON.stringify
        : fastJson(jsonSchemaOf(response));
  const stringifyError = contract.error === undefined ? undefined : fastJson(jsonSchemaOf(contract.error));
  return {
    contract,
    queryNames:
      contract.query === undefined || contract.serviceChecksQuery === true ? [] : Object.keys(contract.query.shape),
    parseBody: (raw) => (body === undefined ? undefined : parseWithSchema(body, raw)) as BodyOf<C>,
    serialize: (value) => {
      if (stringify === undefined) throw new Error(`${contract.name} declares no response body`);
      return stringify(value) as string;
    },
    serializeError: (value) => {
      if (stringifyError === undefined) throw new Error(`${contract.name} declares no error body`);
      return stringifyError(value) as string;
    },
  };
}
