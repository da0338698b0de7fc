/**
 * The scoring routes' contracts (`/api/score`, `/api/score/batch`, `/api/labels`) and the health routes'. The
 * payment event is validated by the engine against the serving model (its fields are configurable: docs/model.md),
 * so the score bodies are declared as JSON objects here; the answers are declared in full (their serializers are
 * compiled from them).
 * @module
 */
import { z } from 'zod';
import { defineContract } from '../http/contract';
import { Reason, VersionRef } from './common';

const Decision = z.enum(['approve', 'review', 'decline']);

export const Escalation = z
  .strictObject({
    model: z.string(),
    outcome: z.string().describe('`ok`, `capped`, `breaker_open`, `busy`, `timeout`, `rate_limited`, \u2026'),
    latencyMs: z.number(),
    reason: z.string().optional(),
    tokens: z.strictObject({ prompt: z.number(), completion: z.number() }),
    costUsd: z.number(),
    triggers: z.array(z.string()),
    localDecision: Decision,
    llm: z
      .strictObject({
        riskLevel: z.enum(['low', 'medium', 'high']),
        score: z.number(),
        reasons: z.array(z.string()),
        decision: Decision,
      })
      .optional(),
  })
  .meta({ id: 'Escalation', description: 'What the LLM review of an escalated payment did (docs/escalation.md).' });

export const ScoreResult = z
  .strictObject({
    transactionId: z.string(),
    score: z.number().nullable().describe('Fraud probability in [0, 1]; null when the model gave no valid score.'),
    decision: Decision,
    reasons: z.array(Reason),
    model: VersionRef,
    source: z.enum(['local', 'openai', 'local-fallback']),
    escalation: Escalation.optional(),
    cache: z.enum(['hit', 'miss', 'degraded']),
    timing: z.strictObject({ queueMs: z.number(), inferenceMs: z.number(), batchSize: z.number() }),
    rules: z
      .array(z.strictObject({ id: z.string(), action: z.enum(['allow', 'block', 'review', 'escalate']) }))
      .optional(),
    ruleset: VersionRef.optional(),
    profile: z.strictObject({ id: z.string() }).optional(),
    ruleErrors: z.array(z.string()).optional(),
  })
  .meta({ id: 'ScoreResult', description: 'The result of scoring one payment.' });

export const FieldError = z
  .strictObject({
    path: z.string(),
    message: z.string(),
    rule: z.string().optional(),
    column: z.number().optional(),
  })
  .meta({ id: 'FieldError', description: 'A field a problem names.' });

export const Problem = z
  .strictObject({
    type: z.string(),
    title: z.string(),
    status: z.number(),
    detail: z.string(),
    code: z.string(),
    errors: z.array(FieldError).optional(),
    instance: z.string().optional(),
  })
  .meta({ id: 'Problem', description: 'An RFC 9457 problem (docs/api.md#errors).' });

export const BatchItemError = z
  .strictObject({ transactionId: z.string().optional(), error: Problem })
  .meta({ id: 'BatchItemError', description: "An invalid or failed event's problem." });

export const score = defineContract({
  name: 'score',
  method: 'POST',
  route: 'score',
  auth: 'function',
  summary: 'Scores one payment event (header `x-deadline-ms`: its deadline).',
  body: z.unknown().describe('A payment event (docs/model.md), validated by the engine.'),
  status: 200,
  response: ScoreResult,
});

export const scoreBatch = defineContract({
  name: 'scoreBatch',
  method: 'POST',
  route: 'score/batch',
  auth: 'function',
  summary: 'Scores `{ events }` (up to `BATCH_MAX_EVENTS`), in order; an invalid event gets its own problem.',
  body: z.unknown().describe('`{ "events": [...] }`, each validated by the engine.'),
  status: 200,
  response: z
    .strictObject({ results: z.array(z.union([ScoreResult, BatchItemError])) })
    .meta({ id: 'BatchResult', description: 'One result or problem per event, in order.' }),
});

export const labels = defineContract({
  name: 'labels',
  method: 'POST',
  route: 'labels',
  auth: 'function',
  summary: 'Stores outcomes `{ labels: [{ transactionId, label, reportedAt, source? }] }` (at most 1000).',
  body: z.unknown().describe('`{ "labels": [...] }`, validated by the learning loop.'),
  status: 200,
  response: z
    .strictObject({ accepted: z.number(), duplicates: z.number() })
    .meta({ id: 'LabelsAdded', description: 'Labels stored by this call, and those already stored.' }),
});

export const healthLive = defineContract({
  name: 'healthLive',
  method: 'GET',
  route: 'health/live',
  auth: 'anonymous',
  summary: 'The process is up.',
  status: 200,
  response: z.strictObject({ status: z.literal('live') }).meta({ id: 'Live', description: 'Liveness.' }),
});

export const healthReady = defineContract({
  name: 'healthReady',
  method: 'GET',
  route: 'health/ready',
  auth: 'anonymous',
  summary: 'Whether the last sample inference succeeded (503 + `Retry-After` when not ready).',
  status: 200,
  response: z
    .strictObject({
      status: z.enum(['ready', 'not_ready']),
      model: VersionRef.nullable(),
      waitingFor: z
        .array(
          z.strictObject({
            kind: z.enum(['model', 'ruleset', 'signals']),
            name: z.string(),
            serving: z.string().nullable(),
            active: z.string().nullable(),
          }),
        )
        .optional(),
    })
    .meta({ id: 'Readiness', description: 'Readiness, and what it waits for.' }),
  otherAnswers: [{ status: 503, description: 'not ready (the same body)' }],
});

/** The scoring and health contracts, in the reference page's order. */
export const SCORE_CONTRACTS = [score, scoreBatch, labels, healthLive, healthReady] as const;
