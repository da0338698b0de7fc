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
import { route, type Reply } from './route';

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

/** The `app.http` options of each admin route of a kind, over the rollout `admin` gives for a request. */
export function adminContractRoutes(
  contracts: AdminContracts,
  admin: (request: HttpRequest) => Promise<ArtifactAdmin>,
): Record<keyof AdminContracts, HttpFunctionOptions> {
  const name = (input: { param(name: string): string | undefined }): string => input.param('name') ?? '';
  return {
    status: route(contracts.status, async (input, request) => ({
      body: (await (await admin(request)).status(name(input))) as never,
    })),
    promote: route(contracts.promote, async (input, request) => {
      const a = await admin(request);
      const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
      return answer(await a.promote(name(input), body));
    }),
    rollback: route(contracts.rollback, async (input, request) => ({
      body: (await (await admin(request)).rollback(name(input))) as never,
    })),
    traffic: route(contracts.traffic, async (input, request) => {
      const a = await admin(request);
      const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
      return answer(await a.traffic(name(input), body));
    }),
  };
}
