/**
 * Compiles a signals document once per version (docs/signals.md): the aggregates' plan, `where` filters and
 * key accessors; the features as closures over a signals row; projections onto a model's feature list; each
 * signal's definition in plain words. Nothing here reads the document per payment.
 * @module
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { UserContext } from '../domain/user-context';
import { AppError, type FieldError } from '../errors/errors';
import { fieldErrorsOf } from '../errors/field-errors';
import { localHour } from '../features/featurizer';
import { compileAggregates } from './compile-aggregates';
import { compileFeatures, type FeatureFn } from './compile-features';
import type { CompiledSignals, Projection } from './compiled-signals';
import { signalsSchema } from './signals-document';
import { signalsView } from './signals-view';

/** `Signals <name> <version>` when the raw document names them, else `The signals document`. */
function label(value: unknown): string {
  const raw = (value ?? {}) as { name?: unknown; version?: unknown };
  return typeof raw.name === 'string' && typeof raw.version === 'string'
    ? `Signals ${raw.name.slice(0, 64)} ${raw.version.slice(0, 32)}`
    : 'The signals document';
}

function invalid(value: unknown, errors: readonly FieldError[]): AppError {
  return new AppError(
    'signals_invalid',
    `${label(value)} is invalid: ${errors.map((e) => `${e.path || '(document)'}: ${e.message}`).join('; ')}.`,
    { errors: [...errors] },
  );
}

/**
 * Validates and compiles a signals document (already parsed JSON).
 * @throws AppError `signals_invalid` naming every bad field: schema, an unknown builtin, a reference to a signal
 *   not declared before the feature, a `where` or `expr` that does not compile (`aggregates.<i>.where`,
 *   `features.<i>.expr`, with the 1-based column).
 */
export function compileSignals(value: unknown): CompiledSignals {
  const parsed = signalsSchema.safeParse(value);
  if (!parsed.success) throw invalid(value, fieldErrorsOf(parsed.error.issues));
  const doc = parsed.data;
  const names = Object.freeze([...doc.aggregates.map((a) => a.name), ...doc.features.map((f) => f.name)]);
  const indexOf = new Map(names.map((n, i) => [n, i] as const));
  const view = signalsView(names);
  const errors: FieldError[] = [];
  const aggregates = compileAggregates(doc.aggregates, errors);
  const features = compileFeatures(doc.features, doc.aggregates.length, indexOf, view, errors);
  if (errors.length > 0) throw invalid(value, errors);
  const definitions = new Map(
    names.map((n, i) => [n, (aggregates.definitions[i] ?? features.definitions[i - doc.aggregates.length]) as string]),
  );
  const a = doc.aggregates.length;
  const fns = features.fns;
  const needsHour = features.needsHour;
  return Object.freeze({
    name: doc.name,
    version: doc.version,
    document: doc,
    names,
    indexOf: (name: string) => indexOf.get(name),
    definition: (name: string) => definitions.get(name),
    plan: aggregates.plan,
    aggregateInput: (event: PaymentEvent, transactionId: string, at: number) =>
      aggregates.input(event, transactionId, at),
    compute(event: PaymentEvent, context: UserContext, aggs: Float64Array, out: Float64Array): void {
      for (let i = 0; i < a; i++) out[i] = aggs[i] ?? 0;
      const hour = needsHour ? localHour(event.timestamp) : 0;
      for (let k = 0; k < fns.length; k++) out[a + k] = (fns[k] as FeatureFn)(event, context, out, hour);
    },
    projection(list: readonly string[]): Projection {
      const missing = list.flatMap((n, j) => (indexOf.has(n) ? [] : [{ name: n, j }]));
      if (missing.length > 0)
        throw new AppError(
          'model_invalid',
          `Signals ${doc.name} ${doc.version} do not compute ${missing.map((m) => m.name.slice(0, 64)).join(', ')}.`,
          {
            errors: missing.map((m) => ({
              path: `features.${m.j}`,
              message: `${m.name.slice(0, 64)} is not a signal of ${doc.name} ${doc.version}`,
            })),
          },
        );
      const index = Int32Array.from(list, (n) => indexOf.get(n) as number);
      return (signals, out, offset) => {
        for (let j = 0; j < index.length; j++) out[offset + j] = signals[index[j] as number] as number;
      };
    },
  });
}
