/**
 * The one error module: every error the engine raises on purpose is an {@link AppError} with a stable
 * `code`. Codes map to HTTP status in exactly one place ({@link STATUS_BY_CODE}); adapters turn errors
 * into RFC 9457 problem documents with {@link toProblem}. docs/api.md lists every code (tested).
 */

/** One invalid field of a request, as reported in a problem's `errors` array. */
export interface FieldError {
  /** JSON-pointer-like dotted path, e.g. `amount` or `events.3.currency`; `""` for the whole body. */
  readonly path: string;
  /** Human-readable reason. Never contains the submitted value (it may be payment data). */
  readonly message: string;
  /** The rule (or offset) id an expression error belongs to (rulesets). */
  readonly rule?: string;
  /** The 1-based column in that rule's expression where the error is (rulesets). */
  readonly column?: number;
}

/** Stable error codes. Clients and operators may search and branch on these; never rename one. */
export const ERROR_CODES = [
  'invalid_json',
  'validation_failed',
  'payload_too_large',
  'unsupported_media_type',
  'not_found',
  'method_not_allowed',
  'unauthenticated',
  'forbidden',
  'model_not_ready',
  'model_invalid',
  'model_shift_exceeded',
  'ruleset_invalid',
  'signals_invalid',
  'conflict',
  'draft_not_approved',
  'overloaded',
  'deadline_exceeded',
  'inference_failed',
  'dependency_unavailable',
  'transaction_in_progress',
  'config_invalid',
  'internal',
] as const;

/** A stable error code. */
export type ErrorCode = (typeof ERROR_CODES)[number];

/** The single map from error code to HTTP status. */
export const STATUS_BY_CODE: Readonly<Record<ErrorCode, number>> = Object.freeze({
  invalid_json: 400,
  validation_failed: 400,
  payload_too_large: 413,
  unsupported_media_type: 415,
  not_found: 404,
  method_not_allowed: 405,
  unauthenticated: 401,
  forbidden: 403,
  model_not_ready: 503,
  model_invalid: 422,
  model_shift_exceeded: 422,
  ruleset_invalid: 422,
  signals_invalid: 422,
  conflict: 409,
  draft_not_approved: 409,
  overloaded: 503,
  deadline_exceeded: 503,
  inference_failed: 500,
  dependency_unavailable: 503,
  transaction_in_progress: 409,
  config_invalid: 500,
  internal: 500,
});

const TITLE_BY_CODE: Readonly<Record<ErrorCode, string>> = Object.freeze({
  invalid_json: 'Malformed JSON',
  validation_failed: 'Request validation failed',
  payload_too_large: 'Payload too large',
  unsupported_media_type: 'Unsupported media type',
  not_found: 'Not found',
  method_not_allowed: 'Method not allowed',
  unauthenticated: 'Not authenticated',
  forbidden: 'Forbidden',
  model_not_ready: 'Model not ready',
  model_invalid: 'Model rejected',
  model_shift_exceeded: 'Model score shift too large',
  ruleset_invalid: 'Ruleset rejected',
  signals_invalid: 'Signals document rejected',
  conflict: 'Conflict with the current state',
  draft_not_approved: 'Draft not approved',
  overloaded: 'Service overloaded',
  deadline_exceeded: 'Deadline exceeded',
  inference_failed: 'Inference failed',
  dependency_unavailable: 'Dependency unavailable',
  transaction_in_progress: 'Transaction in progress',
  config_invalid: 'Invalid configuration',
  internal: 'Internal error',
});

/** Options for {@link AppError}. */
export interface AppErrorOptions {
  /** Every invalid field (validation errors). */
  readonly errors?: readonly FieldError[];
  /** Seconds a client should wait before retrying (sent as `Retry-After`). */
  readonly retryAfterSec?: number;
  /** The underlying error, kept for logs only, never sent to clients. */
  readonly cause?: unknown;
  /** Whether retrying the same input later may succeed (drives Service Bus redelivery). Default: status is 503. */
  readonly transient?: boolean;
}

/** An error with a stable code. `message` becomes the problem's `detail`: keep secrets and payment data out of it. */
export class AppError extends Error {
  override readonly name = 'AppError';
  readonly code: ErrorCode;
  readonly errors: readonly FieldError[];
  readonly retryAfterSec: number | undefined;
  readonly transient: boolean;

  constructor(code: ErrorCode, message: string, options: AppErrorOptions = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.code = code;
    this.errors = options.errors ?? [];
    this.retryAfterSec = options.retryAfterSec;
    this.transient = options.transient ?? STATUS_BY_CODE[code] === 503;
  }

  /** HTTP status for this error's code. */
  get status(): number {
    return STATUS_BY_CODE[this.code];
  }
}

/** RFC 9457 problem details, with this service's extensions (`code`, `errors`). */
export interface Problem {
  readonly type: string;
  readonly title: string;
  readonly status: number;
  readonly detail: string;
  readonly code: ErrorCode;
  readonly errors?: readonly FieldError[];
  readonly instance?: string;
}

/**
 * Where problem types live: each code's `type` is the relative reference `${PROBLEM_TYPE_BASE}${code}`
 * (RFC 9457 §3.1.1: resolved against the request URL), and `GET /api/problems/{code}` on this app
 * answers it with the code's description ({@link describeProblemType}).
 */
export const PROBLEM_TYPE_BASE = '/api/problems/';

const DESCRIPTION_BY_CODE: Readonly<Record<ErrorCode, string>> = Object.freeze({
  invalid_json: 'The request body is not valid JSON.',
  validation_failed: 'The request does not match the schema; `errors` lists every invalid field by path.',
  payload_too_large:
    'The request body is over the limit (64 KiB for one event, 1 MiB for a batch, 4 KiB for admin requests), or a batch holds too many events. Bodies are counted while they are read and refused as soon as the limit is passed.',
  unsupported_media_type: 'The request body is not `application/json`.',
  not_found: 'No such route or resource.',
  method_not_allowed: 'The method is not allowed for this route.',
  unauthenticated:
    'The case API needs a signed-in user: no `x-ms-client-principal`, or one that is not a valid Easy Auth principal.',
  forbidden:
    'The caller may not do this: the case API is disabled (IDENTITY_MODE=disabled), or the user lacks the role (`analyst`, `lead`).',
  model_not_ready:
    'No model is loaded yet (loading, or the configured model failed to load), or readiness failed. Retry after `Retry-After`.',
  model_invalid: 'A model or manifest failed validation (rollout: the rejection names the failed check).',
  model_shift_exceeded:
    "An uploaded model's golden-set score shift against the active version is above MODEL_SHIFT_MAX; upload again with blob metadata force=true to accept it.",
  ruleset_invalid:
    'A ruleset failed validation: schema, an expression that does not compile (named by rule id and column), or a golden case.',
  signals_invalid:
    'A signals document failed validation: schema, an unknown builtin, a reference to a signal not declared before it, or an expression that does not compile (named by path and column).',
  conflict:
    'The request conflicts with the current state (e.g. nothing to roll back to; a verdict on a case already closed).',
  draft_not_approved:
    'The ruleset version is a draft that another lead has not approved: it cannot be promoted, canaried or shadowed.',
  overloaded: 'The service is refusing excess load. Retry after `Retry-After`.',
  deadline_exceeded: 'The request could not be scored within its deadline. Retry after `Retry-After`.',
  inference_failed: 'The inference runtime failed on a valid request.',
  dependency_unavailable: 'A required dependency is unavailable. Retry after `Retry-After`.',
  transaction_in_progress: 'Another instance is scoring this transaction (asynchronous path; redelivered).',
  config_invalid: 'The settings failed validation at start-up; the log names every bad setting.',
  internal: 'An unexpected error occurred; details are only in the logs.',
});

/** The document `GET /api/problems/{code}` answers: what a problem type means. */
export interface ProblemTypeDescription {
  /** The problem type URI (relative reference), as problems carry it. */
  readonly type: string;
  readonly code: ErrorCode;
  readonly title: string;
  /** HTTP status problems of this type carry. */
  readonly status: number;
  readonly description: string;
}

/** Whether a string is one of the {@link ERROR_CODES}. */
export function isErrorCode(code: string): code is ErrorCode {
  return (ERROR_CODES as readonly string[]).includes(code);
}

/**
 * Describes one problem type.
 * @throws AppError `not_found` for a string that is not an error code.
 */
export function describeProblemType(code: string): ProblemTypeDescription {
  if (!isErrorCode(code))
    throw new AppError(
      'not_found',
      `No problem type "${code.slice(0, 64)}"; see ${PROBLEM_TYPE_BASE} + one of the codes.`,
    );
  return {
    type: PROBLEM_TYPE_BASE + code,
    code,
    title: TITLE_BY_CODE[code],
    status: STATUS_BY_CODE[code],
    description: DESCRIPTION_BY_CODE[code],
  };
}

/** Wraps anything thrown into an {@link AppError}; unknown errors become `internal` with a generic detail. */
export function toAppError(err: unknown): AppError {
  if (err instanceof AppError) return err;
  return new AppError('internal', 'An unexpected error occurred.', { cause: err, transient: true });
}

/** Builds the problem document for any thrown value. */
export function toProblem(err: unknown, instance?: string): Problem {
  const e = toAppError(err);
  const problem: Problem = {
    type: PROBLEM_TYPE_BASE + e.code,
    title: TITLE_BY_CODE[e.code],
    status: e.status,
    detail: e.message,
    code: e.code,
    ...(e.errors.length > 0 ? { errors: e.errors } : {}),
    ...(instance === undefined ? {} : { instance }),
  };
  return problem;
}

/** Headers for a problem response: content type and, where set, `Retry-After` (whole seconds, at least 1). */
export function problemHeaders(err: unknown): Record<string, string> {
  const e = toAppError(err);
  const headers: Record<string, string> = { 'content-type': 'application/problem+json' };
  if (e.retryAfterSec !== undefined || e.status === 503) {
    headers['retry-after'] = String(Math.max(1, Math.ceil(e.retryAfterSec ?? 1)));
  }
  return headers;
}
