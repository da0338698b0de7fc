/**
 * The derived features of a signals document, compiled once per version to closures over a signals row:
 * builtins (the featurizer's computations, by name), transforms over references (log1p, ratio, bucket, oneHot,
 * value) and CEL expressions. A feature reads only the aggregates and the features declared before it.
 * @module
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { UserContext, Velocity } from '../domain/user-context';
import type { FieldError } from '../errors/errors';
import { FEATURES } from '../features/featurizer';
import { fieldReader } from './event-fields';
import { celNumber, compileCel, exprEnvironment, signalReferences } from './signals-cel';
import type { FeatureDocument, KeyField } from './signals-document';
import type { SignalsView } from './signals-view';

/** One feature: its value for a payment, given the row so far and the payment's local hour. */
export type FeatureFn = (event: PaymentEvent, context: UserContext, row: Float64Array, hour: number) => number;

/** The features of one version, compiled. */
export interface CompiledFeatures {
  readonly fns: readonly FeatureFn[];
  /** Definitions in plain words, in document order. */
  readonly definitions: readonly string[];
  /** Whether some feature reads the local hour (a builtin): computed once per payment only then. */
  readonly needsHour: boolean;
}

/** What the compiler knows of the row: the index of every signal and how many come before each feature. */
interface RowLayout {
  /** Every signal's index in the row (aggregates, then features). */
  readonly indexOf: ReadonlyMap<string, number>;
  /** The row index of the feature being compiled (what it may read is below it). */
  readonly at: number;
}

type RefFn = (event: PaymentEvent, context: UserContext, row: Float64Array) => number;

const BUILTINS = new Map(FEATURES.map((f) => [f.name, f] as const));
const EMPTY_PROFILE: Readonly<Record<string, unknown>> = Object.freeze({});

/** Why `signals.<name>` may not be read by the feature at `layout.at`, or `undefined` when it may. */
function refProblem(name: string, layout: RowLayout): string | undefined {
  const i = layout.indexOf.get(name);
  if (i === undefined) return `signals.${name} is not declared`;
  if (i >= layout.at) return `signals.${name} is declared after this feature (a feature reads earlier signals only)`;
  return undefined;
}

/** A reference (`signals.<name>`, `event.amount`, `velocity.<figure>`) as a reader, or a problem pushed. */
function compileRef(ref: string, path: string, layout: RowLayout, errors: FieldError[]): RefFn {
  if (ref === 'event.amount') return (e) => e.amount;
  if (ref.startsWith('velocity.')) {
    const figure = ref.slice('velocity.'.length) as keyof Velocity;
    return (_e, c) => c.velocity[figure];
  }
  const name = ref.slice('signals.'.length);
  const problem = refProblem(name, layout);
  if (problem !== undefined) {
    errors.push({ path, message: problem });
    return () => 0;
  }
  const i = layout.indexOf.get(name) as number;
  return (_e, _c, row) => row[i] ?? 0;
}

/**
 * A CEL feature: checked once (a number or a bool; every `signals.<name>` declared before it), evaluated with one
 * reused variables object and the version's view over the row (only the signals before it readable). A bool
 * gives 1/0; a runtime error, or a result that is not a finite number, gives 0.
 */
function compileExpr(
  source: string,
  path: string,
  layout: RowLayout,
  view: SignalsView,
  errors: FieldError[],
): FeatureFn {
  const compiled = compileCel(exprEnvironment(), source, ['double', 'int', 'uint', 'bool']);
  if (!compiled.ok) {
    errors.push({ path, message: `column ${compiled.column}: ${compiled.message}`, column: compiled.column });
    return () => 0;
  }
  const before = errors.length;
  for (const r of signalReferences(compiled.ast)) {
    const problem = refProblem(r.name, layout);
    if (problem !== undefined) errors.push({ path, message: `column ${r.pos + 1}: ${problem}`, column: r.pos + 1 });
  }
  if (errors.length > before) return () => 0;
  const run = compiled.run;
  const vars: Record<string, unknown> = { event: undefined, velocity: undefined, profile: undefined, signals: {} };
  const evaluate = (signals: Readonly<Record<string, number>>): number => {
    vars['signals'] = signals;
    try {
      const v = celNumber(run(vars));
      return v === undefined || !Number.isFinite(v) ? 0 : v;
    } catch {
      return 0; // a runtime error (an absent field without has(), an int division by zero) gives 0
    }
  };
  return (event, context, row) => {
    vars['event'] = event;
    vars['velocity'] = context.velocity;
    vars['profile'] = context.profile ?? EMPTY_PROFILE;
    try {
      return view.with(row, evaluate, layout.at);
    } finally {
      vars['event'] = vars['velocity'] = vars['profile'] = undefined;
    }
  };
}

/** The number of edges at or below `v`: 0 below the first edge, `edges.length` from the last. */
function bucketOf(v: number, edges: readonly number[]): number {
  let i = 0;
  while (i < edges.length && v >= (edges[i] as number)) i++;
  return i;
}

/** The transform of one feature and its definition in plain words. */
function compileFeature(
  f: FeatureDocument,
  path: string,
  layout: RowLayout,
  view: SignalsView,
  errors: FieldError[],
): { fn: FeatureFn; text: string } {
  if (f.builtin !== undefined) {
    const b = BUILTINS.get(f.builtin);
    if (b !== undefined) return { fn: (e, c, _row, hour) => b.compute(e, c, hour), text: b.definition };
    errors.push({
      path: `${path}.builtin`,
      message: `unknown builtin "${f.builtin.slice(0, 64)}": one of ${[...BUILTINS.keys()].join(', ')}`,
    });
    return { fn: () => 0, text: '' };
  }
  if (f.log1p !== undefined) {
    const x = compileRef(f.log1p, `${path}.log1p`, layout, errors);
    return { fn: (e, c, row) => Math.log1p(x(e, c, row)), text: `ln(1 + ${f.log1p})` };
  }
  if (f.ratio !== undefined) {
    const [a, b] = f.ratio;
    const num = compileRef(a, `${path}.ratio.0`, layout, errors);
    const den = compileRef(b, `${path}.ratio.1`, layout, errors);
    return {
      fn: (e, c, row) => {
        const d = den(e, c, row);
        return d === 0 ? 0 : num(e, c, row) / d;
      },
      text: `${a} / ${b} (0 when ${b} is 0)`,
    };
  }
  if (f.bucket !== undefined) {
    const x = compileRef(f.bucket, `${path}.bucket`, layout, errors);
    const edges = Object.freeze([...(f.edges ?? [])]);
    return {
      fn: (e, c, row) => bucketOf(x(e, c, row), edges),
      text: `how many of the edges [${edges.join(', ')}] ${f.bucket} reaches (0 to ${edges.length})`,
    };
  }
  if (f.oneHot !== undefined) {
    const read = fieldReader(f.oneHot as KeyField);
    const equals = f.equals ?? '';
    return { fn: (e) => (read(e) === equals ? 1 : 0), text: `1 if ${f.oneHot} is ${equals}, else 0` };
  }
  if (f.value !== undefined) {
    const x = compileRef(f.value, `${path}.value`, layout, errors);
    return { fn: (e, c, row) => x(e, c, row), text: f.value };
  }
  const source = f.expr ?? '';
  return { fn: compileExpr(source, `${path}.expr`, layout, view, errors), text: source };
}

/**
 * Compiles a document's features, pushing one error per problem (`features.<i>.<field>`: an unknown builtin, a
 * reference to a signal not declared before, an expression that does not compile or type-check).
 * @param indexOf every signal's index in the row (aggregates first, then features in document order).
 * @param view the view of the version's rows, for `signals.<name>` in expressions.
 */
export function compileFeatures(
  docs: readonly FeatureDocument[],
  aggregateCount: number,
  indexOf: ReadonlyMap<string, number>,
  view: SignalsView,
  errors: FieldError[],
): CompiledFeatures {
  const fns: FeatureFn[] = [];
  const definitions: string[] = [];
  docs.forEach((f, k) => {
    const { fn, text } = compileFeature(f, `features.${k}`, { indexOf, at: aggregateCount + k }, view, errors);
    fns.push(fn);
    definitions.push(f.description === undefined ? text : `${text} — ${f.description}`);
  });
  return {
    fns: Object.freeze(fns),
    definitions: Object.freeze(definitions),
    needsHour: docs.some((f) => f.builtin !== undefined),
  };
}
