/**
 * Shapes of the rollout of a versioned document (rulesets, signals): its pointer, refused uploads and the status view
 * the admin routes and a draft's promote answer with.
 * @module
 */
import { z } from 'zod';
import { OpenObject } from './common';
import { FieldError } from './score';

export const TrafficSplit = z
  .strictObject({ candidate: z.string(), canaryPercent: z.number(), shadowPercent: z.number() })
  .meta({ id: 'TrafficSplit', description: "The candidate's canary and shadow shares." });

export const Rejection = z
  .strictObject({
    name: z.string(),
    version: z.string(),
    blobPath: z.string().describe('The blob or file the upload came from.'),
    check: z.string().describe('Which step refused it.'),
    code: z.string(),
    reason: z.string(),
    errors: z.array(FieldError),
    by: z.string().describe('The instance that validated the upload.'),
    at: z.string(),
  })
  .meta({ id: 'Rejection', description: 'A refused upload.' });

export const RolloutVersion = z
  .strictObject({
    version: z.string(),
    by: z.string().optional().describe('The instance that made it active.'),
    at: z.string().optional().describe('When it became active (ISO 8601).'),
  })
  .meta({ id: 'RolloutVersion', description: 'A version, with who made it active and when (when known).' });

export const LastChange = z
  .strictObject({
    kind: z.enum(['publish', 'promote', 'rollback', 'traffic']),
    version: z.string().describe('The version it concerns (the candidate, for a traffic change).'),
    by: z.string().describe('The instance that applied it.'),
    at: z.string(),
  })
  .meta({ id: 'LastChange', description: "The pointer's last change." });

/** The core fields of every kind's status view (models, rulesets, signals), the same names and meanings. */
export const ROLLOUT_CORE = {
  name: z.string(),
  generation: z.number().describe("The pointer's generation (0: nothing published; the shipped version serves)."),
  serving: z.string().optional().describe('The version this instance serves.'),
  servingCandidate: z.string().optional().describe('The candidate loaded on this instance.'),
  active: RolloutVersion.optional().describe("The pointer's active version (every instance serves it)."),
  candidate: z
    .strictObject({ version: z.string(), canaryPercent: z.number(), shadowPercent: z.number() })
    .optional()
    .describe("The pointer's candidate and its shares (percent)."),
  previous: RolloutVersion.optional().describe('What a rollback goes back to.'),
  history: z.array(RolloutVersion).describe('Earlier active versions, newest first.'),
  lastChange: LastChange.optional(),
  rejections: z.array(Rejection).describe('The last refused uploads, newest first.'),
} as const;

export const DocumentStatus = z
  .strictObject({
    ...ROLLOUT_CORE,
    shadow: OpenObject.optional().describe("The candidate's shadow figures on this instance."),
  })
  .meta({
    id: 'DocumentStatus',
    description: "A ruleset's or signals document's rollout: every kind's status view (this instance and the fleet).",
  });
