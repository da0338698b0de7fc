/**
 * The admin API of every versioned artifact kind (models, rulesets, signals): the operations each kind's rollout
 * answers, the body limit and the four-eyes answer. lib/http/admin-contract-routes.ts registers them through the
 * kinds' contracts. A change that awaits a second lead (four-eyes) is answered 202.
 * @module
 */

/**
 * A change kept until another lead asks for the same (four-eyes, `lib/rollout/four-eyes.ts`): answered 202 with
 * `body`, nothing changed yet.
 */
export class AwaitingApproval {
  constructor(readonly body: unknown) {}
}

/** Admin request bodies are small. */
export const ADMIN_BODY_LIMIT_BYTES = 4096;

/** What an artifact kind's rollout answers on its admin routes (each answers with its status view). */
export interface ArtifactAdmin {
  /** The status of `name` (a kind serving one name may ignore it). */
  status(name: string): Promise<unknown>;
  /** `{ "version" }`: makes a validated version active on every instance. */
  promote(name: string, body: unknown): Promise<unknown>;
  /** Back to the previous active version on every instance; any canary or shadow ends. */
  rollback(name: string): Promise<unknown>;
  /** `{ candidate, canaryPercent?, shadowPercent? }`: the candidate's canary and shadow shares. */
  traffic(name: string, body: unknown): Promise<unknown>;
}
