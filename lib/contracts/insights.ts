/**
 * The console's read-only views (`/api/insights`; docs/console.md) and the audit trail (`/api/audit`; docs/audit.md).
 * @module
 */
import { z } from 'zod';
import { defineContract } from '../http/contract';
import { OpenObject, VersionRef, queryParam } from './common';

const days = z.strictObject({ days: queryParam('1 to 30 (default 7).') });

export const RuleStat = z
  .strictObject({
    id: z.string(),
    fired: z.number(),
    labelled: z.number(),
    fraud: z.number(),
    precision: z.number().nullable(),
    recall: z.number().nullable(),
    actions: z.record(z.string(), z.number()).describe('Its hits by the action the rule asked for.'),
  })
  .meta({ id: 'RuleStat', description: "One rule's figures over a window." });

export const RulesInsight = z
  .strictObject({
    decisions: z.number(),
    labelled: z.number(),
    fraud: z.number(),
    rules: z.array(RuleStat),
    from: z.string(),
    to: z.string(),
    truncated: z.boolean(),
  })
  .meta({ id: 'RulesInsight', description: 'The rules page: each rule\u2019s hits, precision and recall.' });

export const DriftPoint = z
  .strictObject({
    start: z.string(),
    samples: z.number(),
    score: z.number().nullable(),
    features: z.record(z.string(), z.number().nullable()),
  })
  .meta({ id: 'DriftPoint', description: 'The PSI of the score and of each feature in one bucket.' });

export const DriftInsight = z
  .strictObject({
    from: z.string(),
    to: z.string(),
    bucket: z.enum(['hour', 'day']),
    model: VersionRef.optional(),
    threshold: z.number(),
    minSamples: z.number(),
    features: z.array(z.string()),
    points: z.array(DriftPoint),
    truncated: z.boolean(),
    note: z.string().optional(),
  })
  .meta({ id: 'DriftInsight', description: 'The drift page.' });

export const AuditEvent = z
  .strictObject({
    id: z.string(),
    at: z.string(),
    actor: z.string(),
    kind: z.enum(['ruleset', 'list', 'model', 'case', 'signals', 'webhook']),
    name: z.string(),
    action: z.string(),
    oldValue: z.unknown(),
    newValue: z.unknown(),
  })
  .meta({ id: 'AuditEvent', description: 'One entry of the audit trail.' });

export const insightsRules = defineContract({
  name: 'insightsRules',
  method: 'GET',
  route: 'insights/rules',
  auth: 'people',
  summary: "Each rule's hits, precision and recall against the labels.",
  query: days,
  status: 200,
  response: RulesInsight,
});

export const insightsDrift = defineContract({
  name: 'insightsDrift',
  method: 'GET',
  route: 'insights/drift',
  auth: 'people',
  summary: 'The PSI of each feature and of the score per hour or day.',
  query: days,
  status: 200,
  response: DriftInsight,
});

export const insightsServing = defineContract({
  name: 'insightsServing',
  method: 'GET',
  route: 'insights/serving',
  auth: 'people',
  summary: 'Model and ruleset versions, canaries and shadows (each kind\u2019s admin status).',
  status: 200,
  response: OpenObject.meta({ id: 'Serving', description: 'Each artifact kind\u2019s rollout status.' }),
});

export const insightsRuleset = defineContract({
  name: 'insightsRuleset',
  method: 'GET',
  route: 'insights/ruleset',
  auth: 'people',
  summary: "The serving ruleset's name, version and document (a new draft starts from it).",
  status: 200,
  response: z
    .strictObject({ name: z.string(), version: z.string(), document: z.unknown() })
    .meta({ id: 'ServingRuleset', description: 'The serving ruleset.' }),
});

export const auditList = defineContract({
  name: 'auditList',
  method: 'GET',
  route: 'audit',
  auth: 'people',
  summary: 'One page of the audit trail, newest first (leads).',
  query: z.strictObject({
    kind: queryParam('`ruleset`, `list`, `model`, `case`, `signals` or `webhook`.'),
    name: queryParam('What changed.'),
    actor: queryParam('Who changed it.'),
    from: queryParam('ISO 8601 date-time.'),
    to: queryParam('ISO 8601 date-time.'),
    cursor: queryParam("The previous page's `cursor`."),
    limit: queryParam('1 to 200 (default 50).'),
  }),
  status: 200,
  response: z
    .strictObject({ events: z.array(AuditEvent), cursor: z.string().optional() })
    .meta({ id: 'AuditPage', description: 'One page of the audit trail.' }),
});

/** The console's views' contracts and the audit trail's, in the reference page's order. */
export const INSIGHT_CONTRACTS = [insightsRules, insightsDrift, insightsServing, insightsRuleset, auditList] as const;
