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

export const DocumentStatus = z
  .strictObject({
    name: z.string(),
    serving: z.string().optional().describe('The version this instance serves.'),
    candidate: z.string().optional().describe('The candidate loaded here.'),
    pointer: z
      .strictObject({
        generation: z.number(),
        active: z.string().optional(),
        previous: z.array(z.string()).describe('Earlier active versions, newest first.'),
        traffic: TrafficSplit.optional(),
        rejections: z.array(Rejection).describe('The last refused uploads, newest first.'),
      })
      .describe('The fleet pointer.'),
    shadow: OpenObject.optional().describe("The candidate's shadow figures on this instance."),
  })
  .meta({
    id: 'DocumentStatus',
    description: "A ruleset's or signals document's rollout (this instance and the fleet).",
  });
