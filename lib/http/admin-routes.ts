/**
 * The admin API of every versioned artifact kind (models, rulesets, signals): the same operations, the same body reads
 * (at most {@link ADMIN_BODY_LIMIT_BYTES}, JSON), the same errors (problem+json, the status from the error code's one
 * map in `lib/errors`). `functions/models-admin.ts`, `functions/rulesets-admin.ts` and `functions/signals-admin.ts`
 * register these handlers on their routes. A change that awaits a second lead (four-eyes) is answered 202.
 * @module
 */
import type { HttpRequest } from '@azure/functions';
import { jsonResponse, readJsonBody, withProblems, type HttpHandler } from './http-io';

/**
 * A change kept until another lead asks for the same (four-eyes, `lib/pointer/four-eyes.ts`): answered 202 with
 * `body`, nothing changed yet.
 */
export class AwaitingApproval {
  constructor(readonly body: unknown) {}
}

/** 202 with the body of an {@link AwaitingApproval}, else 200 with the answer. */
const answer = (result: unknown): ReturnType<typeof jsonResponse> =>
  result instanceof AwaitingApproval ? jsonResponse(202, result.body) : jsonResponse(200, result);

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

/** The route's `{name}`. */
const nameOf = (request: HttpRequest): string => request.params['name'] ?? '';

/**
 * The handlers of the admin routes of one kind, over the engine's rollout of it as `admin` gives it for a request
 * (the adapters pass the audited rollout, acting as the request's actor).
 */
export function adminHandlers(admin: (request: HttpRequest) => Promise<ArtifactAdmin>): {
  status: HttpHandler;
  promote: HttpHandler;
  rollback: HttpHandler;
  traffic: HttpHandler;
} {
  return {
    status: withProblems(async (request) => jsonResponse(200, await (await admin(request)).status(nameOf(request)))),
    promote: withProblems(async (request) => {
      const a = await admin(request);
      const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
      return answer(await a.promote(nameOf(request), body));
    }),
    rollback: withProblems(async (request) =>
      jsonResponse(200, await (await admin(request)).rollback(nameOf(request))),
    ),
    traffic: withProblems(async (request) => {
      const a = await admin(request);
      const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
      return answer(await a.traffic(nameOf(request), body));
    }),
  };
}
