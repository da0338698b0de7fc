/**
 * The narrow tracing interface components call (no OpenTelemetry import here: components stay SDK-free).
 * The telemetry module implements it on OpenTelemetry (`tracing.ts`); with tracing off, {@link noopTracer}
 * runs the function directly, at the cost of one call.
 *
 * Span names (documented in docs/operations.md):
 * - `validate`, `context`, `inference.queue`, `inference.run`, `publish`, `model.rollout` and one
 *   `model.check.<check>` child per validation check (`sha256`, `features`, `signature`, `load`, `warmup`,
 *   `golden`, `shift`);
 * - `escalation` (the LLM second opinion): see {@link ESCALATION_SPAN} and {@link EscalationAttributes}.
 */

/** A span attribute value; `undefined` entries are dropped. */
export type SpanAttributeValue = string | number | boolean | undefined;
/** Span attributes. Never a payment field, a note, a raw user id or a secret. */
export type SpanAttributes = Readonly<Record<string, SpanAttributeValue>>;

/** Stage span names. */
export type StageName =
  | 'validate'
  | 'context'
  | 'inference.queue'
  | 'inference.run'
  | 'escalation'
  | 'publish'
  | 'model.rollout'
  | `model.check.${string}`;

/** The span a stage runs in: it may add attributes learnt while running (e.g. `cache.hit`). */
export interface StageSpan {
  /** False when the span is not recorded (tracing off, or the trace not sampled): skip computing attributes. */
  readonly recording: boolean;
  setAttributes(attrs: SpanAttributes): void;
}

/** Runs stages in child spans of the current span. */
export interface StageTracer {
  /** False when tracing is off: callers may skip building attributes. */
  readonly enabled: boolean;
  /**
   * Runs `fn` in a span named `name` (a child of the active span), ends it when `fn` settles and marks it
   * failed (status ERROR, `error.type` = the error's `code`) if `fn` throws; rethrows.
   */
  span<T>(name: StageName, attrs: SpanAttributes, fn: (span: StageSpan) => Promise<T>): Promise<T>;
  /**
   * Runs the synchronous `fn` in a span named `name` (a child of the active span), ends it when `fn` returns,
   * and marks it failed and rethrows if `fn` throws. The span is not made active (a synchronous stage such as
   * parsing starts no child spans), which spares {@link span}'s context switch and promises.
   */
  spanSync<T>(name: StageName, attrs: SpanAttributes, fn: (span: StageSpan) => T): T;
}

/** The span of a stage that is not recorded (tracing off, or an unsampled trace): takes nothing. */
export const NOOP_SPAN: StageSpan = { recording: false, setAttributes: () => undefined };

/** Tracing off: runs the function, records nothing. */
export const noopTracer: StageTracer = {
  enabled: false,
  span: (_name, _attrs, fn) => fn(NOOP_SPAN),
  spanSync: (_name, _attrs, fn) => fn(NOOP_SPAN),
};

/**
 * The LLM escalation's span: name `escalation`, kind CLIENT. The escalation component (lib/escalation)
 * calls `tracer.span(ESCALATION_SPAN, { 'gen_ai.operation.name': 'chat', 'gen_ai.provider.name': 'openai',
 * 'gen_ai.request.model': deployment }, async (span) => { ...; span.setAttributes({ 'llm.outcome': ...,
 * 'breaker.state': ..., 'gen_ai.usage.input_tokens': n, 'gen_ai.usage.output_tokens': m }) })` and reports
 * its `EscalationEvents` (lib/escalation/types.ts) for the metrics. Never the prompt or the completion.
 */
export const ESCALATION_SPAN = 'escalation' satisfies StageName;

/** Attributes of the `escalation` span (OpenTelemetry `gen_ai.*` conventions plus ours). */
export interface EscalationAttributes {
  readonly 'gen_ai.operation.name': 'chat';
  readonly 'gen_ai.provider.name': string;
  readonly 'gen_ai.request.model'?: string;
  readonly 'gen_ai.usage.input_tokens'?: number;
  readonly 'gen_ai.usage.output_tokens'?: number;
  /** `answered`, `timeout`, `error`, `breaker_open`, `skipped`. */
  readonly 'llm.outcome'?: string;
  /** The circuit breaker's state when the call was made: `closed`, `open`, `half_open`. */
  readonly 'breaker.state'?: string;
}
