/**
 * The four-eyes rule on the ruleset rollout: a version that has a draft serves only once that draft is approved
 * (promote, canary and shadow of it are refused before), and an approved draft's document is what the rollout
 * reads for a version not uploaded.
 * @module
 */
import { parseTrafficBody, parseVersionBody } from '../decisioning/ruleset-traffic';
import { AppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { DraftStore } from './draft-store';

/**
 * The document of an approved draft of the served ruleset `served`, or `undefined`.
 * @throws AppError `dependency_unavailable` while the case database is not reachable.
 */
export async function approvedDocument(
  store: DraftStore,
  served: string,
  name: string,
  version: string,
): Promise<string | undefined> {
  if (name !== served) return undefined;
  const d = await store.get(name, version);
  return d?.state === 'approved' ? JSON.stringify(d.document) : undefined;
}

/** @throws AppError `draft_not_approved` when `version` has a draft that is not approved. */
async function requireApproved(store: DraftStore, name: string, version: string): Promise<void> {
  const d = await store.get(name, version);
  if (d !== undefined && d.state !== 'approved')
    throw new AppError(
      'draft_not_approved',
      `Ruleset ${name} ${version} is a draft (${d.state}): another lead approves it first.`,
    );
}

/** `inner` with the four-eyes rule: a draft not approved is never promoted, canaried or shadowed. */
export function gate(store: DraftStore, inner: ArtifactAdmin): ArtifactAdmin {
  return {
    status: (name) => inner.status(name),
    rollback: (name) => inner.rollback(name),
    promote: async (name, body) => {
      await requireApproved(store, name, parseVersionBody(body));
      return inner.promote(name, body);
    },
    traffic: async (name, body) => {
      const t = parseTrafficBody(body);
      if (t.canaryPercent > 0 || t.shadowPercent > 0) await requireApproved(store, name, t.candidate);
      return inner.traffic(name, body);
    },
  };
}
