/**
 * The admin routes of a versioned artifact kind (models, rulesets, signals) registered through their contracts
 * (lib/contracts/admin.ts, lib/contracts/models.ts): the same operations, body reads (at most
 * {@link ADMIN_BODY_LIMIT_BYTES}, JSON) and errors (problem+json) for every kind, each answer written by its
 * contract's serializer; a change that awaits a second lead
 * (four-eyes) is answered 202 with the request kept. The rollout checks the bodies (its own messages).
 * @module
 */
import type { HttpFunctionOptions, HttpRequest } from '@azure/functions';
import { ADMIN_BODY_LIMIT_BYTES, AwaitingApproval, type ArtifactAdmin } from './admin-routes';
import type { Contract } from './contract';
import { readJsonBody } from './http-io';
import { route, type Reply, type Uses } from './route';

/** The contracts of a kind's admin routes. */
export interface AdminContracts {
  readonly status: Contract;
  readonly promote: Contract;
  readonly rollback: Contract;
  readonly traffic: Contract;
}

/** 202 with the body of an {@link AwaitingApproval}, else the contract's status with the answer. */
const answer = (result: unknown): Reply<Contract> =>
  result instanceof AwaitingApproval ? { status: 202, body: result.body as never } : { body: result as never };

/**
 * The `app.http` options of each admin route of a kind, over the rollout `admin` gives for a request from the
 * subsystems the routes use (`uses`: when one is off, every route answers its problem, decided at registration).
 */
export function adminContractRoutes<S>(
  contracts: AdminContracts,
  uses: Uses<S>,
  admin: (subsystems: S, request: HttpRequest) => ArtifactAdmin,
): Record<keyof AdminContracts, HttpFunctionOptions> {
  const name = (input: { param(name: string): string | undefined }): string => input.param('name') ?? '';
  const options = { uses };
  return {
    status: route(
      contracts.status,
      async (input, s, request) => ({ body: (await admin(s, request).status(name(input))) as never }),
      options,
    ),
    promote: route(
      contracts.promote,
      async (input, s, request) => {
        const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
        return answer(await admin(s, request).promote(name(input), body));
      },
      options,
    ),
    rollback: route(
      contracts.rollback,
      async (input, s, request) => ({ body: (await admin(s, request).rollback(name(input))) as never }),
      options,
    ),
    traffic: route(
      contracts.traffic,
      async (input, s, request) => {
        const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
        return answer(await admin(s, request).traffic(name(input), body));
      },
      options,
    ),
  };
}
