/**
 * The engine's OpenTelemetry instruments (names, units, descriptions: docs/operations.md's metrics table), created
 * once per {@link Telemetry} on its meter.
 */
import type { Meter } from '@opentelemetry/api';
import { SummedCounter } from './summed-counter';

/** What the observable gauges read at each collection. */
export interface GaugeSources {
  /** Rows waiting for an inference worker, all loaded versions. */
  queuedRows(): number;
  /** The active model version, once one is loaded. */
  served(): { readonly name: string; readonly version: string } | undefined;
  /** 1 while the LLM breaker is open, else 0. */
  breakerOpen(): number;
}

/** Creates every instrument on `meter`; the gauges read `g`. */
export function createInstruments(meter: Meter, g: GaugeSources) {
  const instruments = {
    ...pathInstruments(meter),
    ...modelInstruments(meter),
    ...escalationInstruments(meter),
    ...admissionInstruments(meter),
  };
  observeGauges(meter, g);
  return instruments;
}

/** The instruments of one {@link Telemetry}. */
export type Instruments = ReturnType<typeof createInstruments>;

/** A histogram of durations, ms. */
function ms(meter: Meter, name: string, description: string) {
  return meter.createHistogram(name, { unit: 'ms', description });
}

/** The request path: payments scored, their durations, the context cache, batches, shedding. */
function pathInstruments(meter: Meter) {
  const requests = new SummedCounter(meter, 'scoring.requests', { description: 'Scored payments' });
  const scores = meter.createHistogram('scoring.score', { description: 'Fraud probability of scored payments' });
  const requestMs = ms(
    meter,
    'scoring.request.duration',
    'Engine entry to answer, per payment request (ModelInference + ExternalCall + the rest)',
  );
  const inferenceMs = ms(
    meter,
    'scoring.inference.duration',
    'ModelInference: the inference of the batch a request ran in',
  );
  const externalMs = ms(
    meter,
    'scoring.external.duration',
    'ExternalCall: one call to a dependency (attribute dependency)',
  );
  const cacheHits = new SummedCounter(meter, 'scoring.cache.hits', {
    description: 'Context lookups answered by a tier',
  });
  const cacheMisses = new SummedCounter(meter, 'scoring.cache.misses', {
    description: 'Context lookups a tier could not answer',
  });
  const batchRows = meter.createHistogram('inference.batch.rows', { description: 'Rows per inference batch' });
  const batchMs = ms(meter, 'inference.batch.duration', 'Batch dispatch to result');
  const shed = meter.createCounter('scoring.shed', {
    description: 'Requests refused on arrival (queue full or deadline)',
  });
  const expired = meter.createCounter('inference.expired', {
    description: 'Queued requests that started past their deadline (they still run)',
  });
  const workerExits = meter.createCounter('inference.worker.exits', {
    description: 'Inference workers that died and were replaced',
  });
  const degraded = meter.createCounter('context.degraded', { description: 'Context lookups answered degraded' });
  const corrupt = meter.createCounter('context.corrupt', {
    description: 'Unreadable cached contexts treated as misses',
  });
  return {
    requests,
    scores,
    requestMs,
    inferenceMs,
    externalMs,
    cacheHits,
    cacheMisses,
    batchRows,
    batchMs,
    shed,
    expired,
    workerExits,
    degraded,
    corrupt,
  };
}

/** The model: loads, invalid outputs, version swaps. */
function modelInstruments(meter: Meter) {
  const modelLoads = meter.createCounter('model.loads', { description: 'Model load attempts' });
  const invalidScores = meter.createCounter('scoring.invalid_score', {
    description: 'Model outputs that were not a finite number in [0, 1] (answered review: fail closed)',
  });
  const modelLoadMs = ms(meter, 'model.load.duration', 'Model load and warm-up time');
  const swaps = meter.createCounter('scoring.model.swaps', {
    description: 'Served model version changes on this instance',
  });
  return { modelLoads, invalidScores, modelLoadMs, swaps };
}

/** LLM escalation: outcomes, breaker transitions, tokens and cost. */
function escalationInstruments(meter: Meter) {
  const escalations = meter.createCounter('scoring.escalations', { description: 'LLM escalations, by outcome' });
  const breakerTransitions = meter.createCounter('scoring.breaker.transitions', {
    description: 'LLM circuit breaker state changes',
  });
  const escalationTokens = meter.createCounter('scoring.escalation.tokens', {
    unit: '{token}',
    description: 'LLM tokens used by escalations (attribute kind: prompt | completion)',
  });
  const escalationCost = meter.createCounter('scoring.escalation.cost', {
    unit: 'USD',
    description: 'Estimated LLM cost of escalations, from the configured prices per 1k tokens',
  });
  return { escalations, breakerTransitions, escalationTokens, escalationCost };
}

/** Admission: refusals, late answers, the limit. */
function admissionInstruments(meter: Meter) {
  const admissionRefused = meter.createCounter('admission.refused', {
    description: 'Requests refused on reaching the app (503 overloaded; attribute reason: deadline | ceiling)',
  });
  const lateAnswers = meter.createCounter('admission.late_answers', {
    description: 'Requests served (200) after their own deadline',
  });
  const admissionLimit = meter.createHistogram('admission.limit', {
    description: 'Admission limit (requests inside the engine) after each change',
  });
  return { admissionRefused, lateAnswers, admissionLimit };
}

/** The observable gauges, reading `g` at each collection. */
function observeGauges(meter: Meter, g: GaugeSources): void {
  meter
    .createObservableGauge('scoring.batch.queue_depth', {
      unit: '{row}',
      description: 'Rows waiting for an inference worker, all served versions',
    })
    .addCallback((r) => r.observe(g.queuedRows()));
  meter
    .createObservableGauge('scoring.model.served', {
      description: 'The model version this instance serves (value 1; attributes model.name, model.version)',
    })
    .addCallback((r) => {
      const served = g.served();
      if (served !== undefined) r.observe(1, { 'model.name': served.name, 'model.version': served.version });
    });
  meter
    .createObservableGauge('scoring.breaker.open', {
      description: 'LLM circuit breaker open (1) or not (0) on this instance',
    })
    .addCallback((r) => r.observe(g.breakerOpen()));
}
