/**
 * The model admin routes' contracts (`/api/models…`; the host's master key; docs/rollout.md): the fleet's status of
 * the served model, this instance's detailed health, promote, rollback and traffic. With `MODEL_DIRECT_ROLLOUT=false`
 * a promote or traffic change waits for a second lead (four-eyes): answered 202 with the request kept. The rollout
 * checks the bodies itself (lib/http/admin-routes.ts reads them).
 * @module
 */
import { z } from 'zod';
import { defineContract } from '../http/contract';
import { TrafficBody, VersionBody } from './admin';
import { pathParam } from './common';
import { ROLLOUT_CORE } from './rollout';

const ModelPointer = z
  .strictObject({
    name: z.string(),
    version: z.string(),
    blobPath: z.string().describe('`{container}/{name}/{version}.onnx`, or `bundled:{name}/{version}`.'),
    sha256: z.string(),
    source: z.enum(['repository', 'bundled']),
    publishedBy: z.string().describe('The instance that published it.'),
    publishedAt: z.string(),
  })
  .meta({ id: 'ModelPointer', description: 'A published model version.' });

const VersionView = z
  .strictObject({
    ...ModelPointer.shape,
    validation: z
      .strictObject({
        sizeBytes: z.number(),
        batchSizes: z.array(z.number()),
        goldenRows: z.number(),
        goldenSource: z.enum(['manifest', 'kept', 'none']),
        shift: z
          .strictObject({
            against: z.string(),
            meanAbs: z.number().describe('Mean absolute score difference over the golden rows.'),
            maxAbs: z.number(),
            rows: z.number(),
            bound: z.number().optional(),
            exceeded: z.boolean(),
          })
          .optional(),
        forced: z.boolean(),
        loadMs: z.number(),
      })
      .optional()
      .describe('How the version was validated.'),
  })
  .meta({ id: 'ModelVersionView', description: 'A model version as the status shows it.' });

const ShadowDistribution = z
  .strictObject({
    version: z.string(),
    n: z.number(),
    mean: z.number().nullable(),
    histogram: z.array(z.strictObject({ from: z.number(), to: z.number(), count: z.number() })),
  })
  .meta({ id: 'ShadowDistribution', description: "One version's shadow score distribution." });

const FleetReadiness = z
  .strictObject({
    instanceId: z.string(),
    store: z.string(),
    generation: z.number().describe('Generation of the pointer last applied (0: none yet).'),
    stale: z.boolean().describe('It could not load the version the pointer names and serves an older one.'),
    desiredVersion: z.string().optional(),
    reason: z.string().optional(),
    candidateVersion: z.string().optional(),
    candidateError: z.string().optional(),
  })
  .meta({ id: 'FleetReadiness', description: "This instance's place in the model rollout." });

export const ModelStatus = z
  .strictObject({
    ...ROLLOUT_CORE,
    shadow: z
      .strictObject({
        active: ShadowDistribution,
        candidate: ShadowDistribution,
        meanAbsDiff: z.number().nullable(),
        errors: z.number(),
      })
      .optional()
      .describe("Both versions' score distributions side by side (fleet-wide)."),
    fleet: z
      .strictObject({
        versions: z.array(VersionView).describe('Validated versions, newest first.'),
        instances: z
          .array(
            z.strictObject({
              instanceId: z.string(),
              name: z.string(),
              activeVersion: z.string().optional(),
              candidateVersion: z.string().optional(),
              generation: z.number(),
              stale: z.boolean(),
              desiredVersion: z.string().optional(),
              staleReason: z.string().optional(),
              reportedAtMs: z.number(),
            }),
          )
          .describe('Instances that reported recently.'),
        thisInstance: FleetReadiness,
      })
      .describe('What only the model kind shows: validated versions, the instances, this instance.'),
  })
  .meta({ id: 'ModelStatus', description: "The served model's rollout: every kind's status view, and the fleet." });

export const PendingAnswer = z
  .strictObject({
    name: z.string(),
    pending: z.strictObject({
      change: z.enum(['promote', 'traffic']),
      version: z.string(),
      canaryPercent: z.number().optional(),
      shadowPercent: z.number().optional(),
      requestedBy: z.string(),
      at: z.string(),
    }),
    awaiting: z.string(),
  })
  .meta({ id: 'PendingAnswer', description: 'A change kept until another lead asks for the same (four-eyes).' });

export const HealthDetail = z
  .strictObject({
    status: z.enum(['ready', 'not_ready']),
    model: z.strictObject({ name: z.string(), version: z.string() }).nullable(),
    executionProviders: z.array(z.string()).describe('Execution providers the session really uses.'),
    fallbackReason: z.string().nullable(),
    reason: z.string().nullable().describe('Why not ready.'),
    waitingFor: z.array(
      z.strictObject({
        kind: z.enum(['model', 'ruleset', 'signals']),
        name: z.string(),
        serving: z.string().nullable(),
        active: z.string().nullable(),
        reason: z.string(),
      }),
    ),
    lastCheckAt: z.string().nullable().describe('When the sample inference behind this state ran.'),
    probeIntervalSec: z.number(),
    fleet: FleetReadiness.nullable(),
  })
  .meta({ id: 'HealthDetail', description: "This instance's detailed health." });

const name = z.strictObject({ name: pathParam("The model's name.") });
const changed = { status: 200, response: z.union([ModelStatus, PendingAnswer]) } as const;
const awaiting = [{ status: 202, description: 'Four-eyes: the request is kept until another lead asks the same.' }];

export const modelsList = defineContract({
  name: 'modelsList',
  method: 'GET',
  route: 'models',
  auth: 'admin',
  summary: "Each served model's status view (this app serves one), as `GET /api/models/{name}` answers it.",
  status: 200,
  response: z.strictObject({ models: z.array(ModelStatus) }).meta({ id: 'ModelsList', description: 'The models.' }),
});

export const modelsStatus = defineContract({
  name: 'modelsStatus',
  method: 'GET',
  route: 'models/{name}',
  auth: 'admin',
  summary:
    "Every kind's status view: active, candidate and previous versions, the last change and refused uploads, shadow distributions, the fleet.",
  params: name,
  status: 200,
  response: ModelStatus,
});

export const modelsHealth = defineContract({
  name: 'modelsHealth',
  method: 'GET',
  route: 'models/health',
  auth: 'admin',
  summary: "This instance's detailed health: model, execution providers, why not ready, its place in the fleet.",
  status: 200,
  response: HealthDetail,
});

export const modelsPromote = defineContract({
  name: 'modelsPromote',
  method: 'POST',
  route: 'models/{name}/promote',
  auth: 'admin',
  summary: 'Makes a validated version active on every instance (audited).',
  params: name,
  body: VersionBody,
  ...changed,
  otherAnswers: awaiting,
});

export const modelsRollback = defineContract({
  name: 'modelsRollback',
  method: 'POST',
  route: 'models/{name}/rollback',
  auth: 'admin',
  summary: 'Back to the previous pointer on every instance (audited).',
  params: name,
  status: 200,
  response: ModelStatus,
});

export const modelsTraffic = defineContract({
  name: 'modelsTraffic',
  method: 'PUT',
  route: 'models/{name}/traffic',
  auth: 'admin',
  summary: "The candidate's canary and shadow shares (audited).",
  params: name,
  body: TrafficBody,
  ...changed,
  otherAnswers: awaiting,
});

/** The model admin contracts, in the reference page's order. */
export const MODEL_CONTRACTS = [
  modelsList,
  modelsStatus,
  modelsHealth,
  modelsPromote,
  modelsRollback,
  modelsTraffic,
] as const;
