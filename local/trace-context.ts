/**
 * The invocation's W3C trace context, as the Functions host passes it to the worker: from an incoming
 * `traceparent` (HTTP header, or a Service Bus message's `traceparent` / `Diagnostic-Id` application
 * property), else a new trace. The real host first starts its own span under the incoming one and passes
 * that; this local host has no span of its own, so the function's root span is a direct child of the caller's.
 */
import { randomFillSync } from 'node:crypto';
import type { RpcTraceContext } from './core-types';

const TRACEPARENT = /^[0-9a-f]{2}-([0-9a-f]{32})-([0-9a-f]{16})-[0-9a-f]{2}$/;

/** True for a well-formed `traceparent` with non-zero ids (version `ff` is invalid). */
export function isTraceparent(value: unknown): value is string {
  if (typeof value !== 'string') return false;
  const m = TRACEPARENT.exec(value.trim().toLowerCase());
  return m !== null && !value.startsWith('ff') && !/^0+$/.test(m[1] ?? '') && !/^0+$/.test(m[2] ?? '');
}

/** The trace context for one invocation: `traceparent` if valid (with `tracestate`), else a new sampled trace. */
export function invocationTraceContext(traceparent: unknown, tracestate?: unknown): RpcTraceContext {
  if (isTraceparent(traceparent)) {
    return {
      traceParent: traceparent.trim().toLowerCase(),
      ...(typeof tracestate === 'string' && tracestate !== '' ? { traceState: tracestate } : {}),
      attributes: {},
    };
  }
  return { traceParent: `00-${randomHex(16)}-${randomHex(8)}-01`, attributes: {} };
}

/** Random bytes drawn from one pool refilled every 4 KiB: one `randomFillSync` per ~170 invocations, not two per invocation. */
const pool = Buffer.alloc(4096);
let used = pool.length;

/** `bytes` random bytes as hex, never all zero (an all-zero trace or span id is invalid). */
function randomHex(bytes: number): string {
  for (;;) {
    if (used + bytes > pool.length) {
      randomFillSync(pool);
      used = 0;
    }
    const hex = pool.toString('hex', used, (used += bytes));
    if (!/^0+$/.test(hex)) return hex;
  }
}
