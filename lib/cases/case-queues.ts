/**
 * Named queues and their routing (docs/cases.md#queues-and-slas): a queues document
 * `{ queues: [{ name, slaHours, when? }], default }`, parsed strictly (zod) and compiled once; a case is routed when
 * it is opened to the first queue whose `when` (CEL over the decision) holds, else to `default`, and its SLA
 * deadline is its decision time plus the queue's `slaHours`.
 *
 * A `when` sees `rules` (list of the ids of the rules that fired), `merchantId`, `currency`, `decision` (strings),
 * `amount` (double), `score` (double; NaN without a valid score) and `has_score` (bool). It is compiled with its own
 * environment (`@marcbachmann/cel-js`, as lib/decisioning compiles rules): no I/O, no `eval`. An expression that
 * fails at run time (say, a missing field) does not match, and routing moves on to the next queue.
 * @module
 */
import { promises as fs } from 'node:fs';
import { Environment } from '@marcbachmann/cel-js';
import { z } from 'zod';
import { AppError, type FieldError } from '../errors/errors';
import { fieldErrorsOf } from '../errors/field-errors';
import type { NewCase } from './case-store';

/** A queue's name: a letter, then letters, digits or `_ . -` (at most 64). */
export const QUEUE_NAME = /^[A-Za-z][A-Za-z0-9_.-]{0,63}$/;

/** The most queues a document may name. */
const MAX_QUEUES = 100;
/** The largest queues file read, bytes. */
const MAX_FILE_BYTES = 256 * 1024;

const queueSchema = z.strictObject({
  name: z.string().regex(QUEUE_NAME, { error: 'must be a queue name like high-value' }),
  slaHours: z.number().positive().max(8784, { error: 'must be at most 8784 (366 days)' }),
  when: z.string().min(1).max(4000).optional(),
});

/** The queues document's schema. */
export const queuesSchema = z
  .strictObject({
    queues: z.array(queueSchema).min(1).max(MAX_QUEUES),
    default: z.string().regex(QUEUE_NAME, { error: 'must be a queue name like general' }),
  })
  .superRefine((doc, ctx) => {
    const seen = new Set<string>();
    doc.queues.forEach((q, i) => {
      if (seen.has(q.name))
        ctx.addIssue({ code: 'custom', path: ['queues', i, 'name'], message: `queue ${q.name} is named twice` });
      seen.add(q.name);
    });
    if (seen.size > 0 && !seen.has(doc.default))
      ctx.addIssue({
        code: 'custom',
        path: ['default'],
        message: `must be one of the queues (${[...seen].join(', ')})`,
      });
  });

/** A queues document. */
export type QueuesDocument = z.infer<typeof queuesSchema>;

/** The document used when `CASE_QUEUES_FILE` is not set: one queue, `general`, with an SLA of 24 hours. */
export const DEFAULT_QUEUES: QueuesDocument = { queues: [{ name: 'general', slaHours: 24 }], default: 'general' };

/** Where a case goes: its queue and that queue's SLA. */
export interface CaseRoute {
  readonly queue: string;
  readonly slaHours: number;
}

/** A compiled queues document. */
export interface CaseRouter {
  /** The queues, in the document's order, with their SLA. */
  readonly queues: readonly CaseRoute[];
  /** The queue of a case being opened. */
  route(c: NewCase): CaseRoute;
}

/** What a `when` is evaluated against. */
interface RouteVariables {
  readonly rules: readonly string[];
  readonly merchantId: string;
  readonly amount: number;
  readonly currency: string;
  readonly score: number;
  readonly has_score: boolean;
  readonly decision: string;
}

let env: Environment | undefined;

function routingEnvironment(): Environment {
  env ??= new Environment({ limits: { maxAstNodes: 500, maxDepth: 32, maxListElements: 1000, maxMapEntries: 100 } })
    .registerVariable('rules', 'list<string>')
    .registerVariable('merchantId', 'string')
    .registerVariable('amount', 'double')
    .registerVariable('currency', 'string')
    .registerVariable('score', 'double')
    .registerVariable('has_score', 'bool')
    .registerVariable('decision', 'string');
  return env;
}

function errorColumn(err: unknown): number {
  const node = (err as { node?: { pos?: unknown } } | undefined)?.node;
  return typeof node?.pos === 'number' ? node.pos + 1 : 1;
}

function errorSummary(err: unknown): string {
  const e = err as { summary?: unknown; message?: unknown };
  return String(e.summary ?? e.message ?? 'invalid expression').split('\n')[0] as string;
}

type Predicate = (v: RouteVariables) => boolean;

/** Compiles one `when`, or pushes an error naming the queue and the column. */
function compileWhen(name: string, source: string, path: string, errors: FieldError[]): Predicate {
  const fail = (message: string, column: number): Predicate => {
    errors.push({ path, message: `queue ${name}: column ${column}: ${message}`, column });
    return () => false;
  };
  try {
    const expr = routingEnvironment().parse(source);
    const checked = expr.check();
    if (!checked.valid) return fail(errorSummary(checked.error), errorColumn(checked.error));
    if (checked.type !== 'bool' && checked.type !== 'dyn')
      return fail(`the expression must be a bool, not ${checked.type ?? 'unknown'}`, 1);
    return (v) => {
      try {
        return expr(v as unknown as Record<string, unknown>) === true;
      } catch {
        return false;
      }
    };
  } catch (err) {
    return fail(errorSummary(err), errorColumn(err));
  }
}

/**
 * Validates and compiles a queues document (parsed JSON).
 * @throws AppError `config_invalid` naming every bad field, and every `when` that does not compile (`path`
 *   `queues.<i>.when`, the message naming the queue and the column).
 */
export function compileQueues(value: unknown): CaseRouter {
  const parsed = queuesSchema.safeParse(value);
  if (!parsed.success) {
    const errors = fieldErrorsOf(parsed.error.issues);
    throw new AppError(
      'config_invalid',
      `The queues document is invalid: ${errors.map((e) => `${e.path || '(document)'}: ${e.message}`).join('; ')}.`,
      { errors },
    );
  }
  const doc = parsed.data;
  const errors: FieldError[] = [];
  const compiled = doc.queues.map((q, i) => ({
    route: { queue: q.name, slaHours: q.slaHours } as CaseRoute,
    when: q.when === undefined ? undefined : compileWhen(q.name, q.when, `queues.${i}.when`, errors),
  }));
  if (errors.length > 0)
    throw new AppError(
      'config_invalid',
      `The queues document does not compile: ${errors.map((e) => `${e.path}: ${e.message}`).join('; ')}.`,
      { errors },
    );
  const fallback = compiled.find((q) => q.route.queue === doc.default)?.route ?? { queue: doc.default, slaHours: 24 };
  return Object.freeze({
    queues: compiled.map((q) => q.route),
    route(c: NewCase): CaseRoute {
      const vars: RouteVariables = {
        rules: c.rules.map((r) => r.id),
        merchantId: c.payment.merchantId,
        amount: c.payment.amount,
        currency: c.payment.currency,
        score: c.score ?? Number.NaN,
        has_score: c.score !== null,
        decision: c.decision,
      };
      for (const q of compiled) if (q.when === undefined || q.when(vars)) return q.route;
      return fallback;
    },
  });
}

/**
 * The router of `file` (`CASE_QUEUES_FILE`, an absolute path), or of {@link DEFAULT_QUEUES} when none is given.
 * @throws AppError `config_invalid` for a file that cannot be read, is larger than 256 KiB, is not JSON, or does not
 *   compile (naming the file and every field).
 */
export async function loadQueues(file: string | undefined): Promise<CaseRouter> {
  if (file === undefined) return compileQueues(DEFAULT_QUEUES);
  let text: string;
  try {
    const handle = await fs.open(file, 'r');
    try {
      const { size } = await handle.stat();
      if (size > MAX_FILE_BYTES)
        throw new AppError('config_invalid', `CASE_QUEUES_FILE ${file} is larger than ${MAX_FILE_BYTES} bytes.`);
      text = await handle.readFile('utf8');
    } finally {
      await handle.close();
    }
  } catch (err) {
    if (err instanceof AppError) throw err;
    throw new AppError('config_invalid', `CASE_QUEUES_FILE ${file} cannot be read (${(err as Error).message}).`);
  }
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new AppError('config_invalid', `CASE_QUEUES_FILE ${file} is not JSON.`);
  }
  try {
    return compileQueues(value);
  } catch (err) {
    if (err instanceof AppError)
      throw new AppError('config_invalid', `CASE_QUEUES_FILE ${file}: ${err.message}`, {
        errors: err.errors,
      });
    throw err;
  }
}
