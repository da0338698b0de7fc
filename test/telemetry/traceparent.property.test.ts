/**
 * The fast path of `contextFromTraceparent` (a canonical version-00 header, no `tracestate`) gives exactly
 * the span context OpenTelemetry's W3C propagator gives, for canonical headers and for every near miss
 * (other versions and flags, upper case, whitespace, zero or short ids, tracestate): fast-check.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { defaultTextMapGetter, ROOT_CONTEXT, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { contextFromTraceparent } from '../../lib/telemetry/invocation-tracing';

const propagator = new W3CTraceContextPropagator();

/** What the W3C propagator extracts: the oracle. */
function viaPropagator(traceparent: string, tracestate?: string) {
  const carrier: Record<string, string> = { traceparent };
  if (tracestate !== undefined) carrier['tracestate'] = tracestate;
  return trace.getSpanContext(propagator.extract(ROOT_CONTEXT, carrier, defaultTextMapGetter));
}

const hex = (n: number) => fc.string({ unit: fc.constantFrom(...'0123456789abcdef'), minLength: n, maxLength: n });
const zeroOr = (arb: fc.Arbitrary<string>, n: number) =>
  fc.oneof({ weight: 5, arbitrary: arb }, fc.constant('0'.repeat(n)));

/** Headers around the canonical form, each part sometimes bent out of it. */
const traceparents = fc
  .record({
    version: fc.constantFrom('00', '00', '00', '01', 'ff', '0g'),
    traceId: zeroOr(hex(32), 32),
    spanId: zeroOr(hex(16), 16),
    flags: fc.oneof(fc.constantFrom('00', '01', '01'), hex(2)),
    bend: fc.constantFrom('none', 'none', 'none', 'upper', 'lead-space', 'trail', 'short', 'extra'),
  })
  .map(({ version, traceId, spanId, flags, bend }) => {
    const tp = `${version}-${traceId}-${spanId}-${flags}`;
    switch (bend) {
      case 'upper':
        return tp.toUpperCase();
      case 'lead-space':
        return ` ${tp}`;
      case 'trail':
        return `${tp} `;
      case 'short':
        return tp.slice(0, -1);
      case 'extra':
        return `${tp}-abc`;
      default:
        return tp;
    }
  });

describe('contextFromTraceparent', () => {
  it('matches the W3C propagator on canonical headers and near misses', () => {
    fc.assert(
      fc.property(traceparents, (tp) => {
        assert.deepEqual(trace.getSpanContext(contextFromTraceparent(tp)), viaPropagator(tp), tp);
      }),
      { numRuns: 2000 },
    );
  });

  it('matches it with a tracestate too', () => {
    fc.assert(
      fc.property(traceparents, fc.constantFrom('congo=t61rcWkgMzE', 'a=1,b=2', ''), (tp, ts) => {
        const ours = trace.getSpanContext(contextFromTraceparent(tp, ts));
        const theirs = viaPropagator(tp, ts);
        assert.equal(ours?.traceId, theirs?.traceId);
        assert.equal(ours?.traceState?.serialize(), theirs?.traceState?.serialize());
      }),
      { numRuns: 500 },
    );
  });

  it('takes the canonical form as a remote parent, sampled or not', () => {
    const sampled = trace.getSpanContext(
      contextFromTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01'),
    );
    assert.deepEqual(sampled, {
      traceId: '0af7651916cd43dd8448eb211c80319c',
      spanId: 'b7ad6b7169203331',
      traceFlags: 1,
      isRemote: true,
    });
    const unsampled = contextFromTraceparent('00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-00');
    assert.equal(trace.getSpanContext(unsampled)?.traceFlags, 0);
    assert.equal(
      trace.getSpanContext(contextFromTraceparent('00-' + '0'.repeat(32) + '-b7ad6b7169203331-01')),
      undefined,
    );
    assert.equal(contextFromTraceparent(undefined), ROOT_CONTEXT);
  });
});
