/**
 * The ruleset and signals admin routes' contracts (`/api/rulesets/{name}…`, `/api/signals/{name}…`; the host's master
 * key; docs/rollout.md): the rollout's status, promote, rollback and traffic, each answered with the status. The
 * rollout checks the bodies itself (lib/http/admin-routes.ts reads them): the bodies declared here are what it takes.
 * @module
 */
import { z } from 'zod';
import { defineContract } from '../http/contract';
import { pathParam } from './common';
import { DocumentStatus } from './rollout';

export const VersionBody = z
  .strictObject({ version: z.string().describe('A validated version.') })
  .meta({ id: 'VersionBody', description: 'The version to make active.' });

export const TrafficBody = z
  .strictObject({
    candidate: z.string(),
    canaryPercent: z.number().optional().describe('0 to 100: the share of users it decides for.'),
    shadowPercent: z.number().optional().describe('0 to 100: the share of the other payments it runs in shadow for.'),
  })
  .meta({ id: 'TrafficBody', description: "The candidate's canary and shadow shares." });

/** Admin request bodies are small. */
const ADMIN_BODY_LIMIT_BYTES = 4096;

/** The four admin contracts of a document kind (`rulesets`, `signals`). */
function documentAdmin<K extends 'rulesets' | 'signals'>(kind: K, label: string) {
  const params = z.strictObject({ name: pathParam(`The ${label}'s name.`) });
  const common = { auth: 'admin', params, status: 200, response: DocumentStatus } as const;
  return {
    status: defineContract({
      ...common,
      name: `${kind}Status`,
      method: 'GET',
      route: `${kind}/{name}`,
      summary: `The ${label} served here, the candidate loaded, the fleet pointer (shares, rejections), shadow figures.`,
    }),
    promote: defineContract({
      ...common,
      name: `${kind}Promote`,
      method: 'POST',
      route: `${kind}/{name}/promote`,
      summary: 'Validates that version and makes it active on every instance (audited).',
      body: VersionBody,
      bodyLimitBytes: ADMIN_BODY_LIMIT_BYTES,
    }),
    rollback: defineContract({
      ...common,
      name: `${kind}Rollback`,
      method: 'POST',
      route: `${kind}/{name}/rollback`,
      summary: 'Back to the previous active version on every instance; any canary or shadow ends (audited).',
    }),
    traffic: defineContract({
      ...common,
      name: `${kind}Traffic`,
      method: 'PUT',
      route: `${kind}/{name}/traffic`,
      summary: 'The candidate decides for a stable share of users and runs in shadow for a share of the others.',
      body: TrafficBody,
      bodyLimitBytes: ADMIN_BODY_LIMIT_BYTES,
    }),
  };
}

export const rulesetsAdmin = documentAdmin('rulesets', 'ruleset');
export const signalsAdmin = documentAdmin('signals', 'signals document');

/** The admin contracts, in the reference page's order. */
export const ADMIN_CONTRACTS = [...Object.values(rulesetsAdmin), ...Object.values(signalsAdmin)] as const;
