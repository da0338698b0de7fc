/**
 * Shapes several routes answer with: a model or ruleset version's name and version, a reason of a decision.
 * @module
 */
import { z } from 'zod';

/** A model's, ruleset's or signals document's name and version. */
export const VersionRef = z
  .strictObject({ name: z.string(), version: z.string() })
  .meta({ id: 'VersionRef', description: "A model's, ruleset's or signals document's name and version." });

/** A reason of a decision: a feature's contribution, or a rule that fired (`rule:<id>`, contribution 0). */
export const Reason = z
  .strictObject({
    code: z.string().describe('Feature name (stable code), or `rule:<id>`.'),
    contribution: z.number().describe('Contribution to the logit (log-odds); positive raises risk.'),
    description: z.string(),
  })
  .meta({ id: 'Reason', description: 'A reason of a decision.' });

/** An open JSON object (every property written as it is). */
export const OpenObject = z.record(z.string(), z.unknown());

/** A query parameter: an optional string (the route's service checks its value and names it when bad). */
export const queryParam = (description: string): z.ZodOptional<z.ZodString> =>
  z.string().describe(description).optional();

/** A path parameter (the service answers 404 for a value that names nothing). */
export const pathParam = (description: string): z.ZodString => z.string().describe(description);
