/**
 * The admin routes of a whole-document kind (rulesets, signals) registered through their contracts
 * (lib/contracts/admin.ts): the same operations, body reads and errors as {@link adminHandlers}, each answer written
 * by its contract's serializer. The rollout checks the bodies (its own messages).
 * @module
 */
import type { HttpFunctionOptions, HttpRequest } from '@azure/functions';
import { ADMIN_BODY_LIMIT_BYTES, type ArtifactAdmin } from './admin-routes';
import type { Contract } from './contract';
import { readJsonBody } from './http-io';
import { route } from './route';

/** The four contracts of a kind's admin routes. */
export interface AdminContracts {
  readonly status: Contract;
  readonly promote: Contract;
  readonly rollback: Contract;
  readonly traffic: Contract;
}

/** The `app.http` options of each admin route of a kind, over the rollout `admin` gives for a request. */
export function documentAdminRoutes(
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
      return { body: (await a.promote(name(input), body)) as never };
    }),
    rollback: route(contracts.rollback, async (input, request) => ({
      body: (await (await admin(request)).rollback(name(input))) as never,
    })),
    traffic: route(contracts.traffic, async (input, request) => {
      const a = await admin(request);
      const body = await readJsonBody(request, ADMIN_BODY_LIMIT_BYTES);
      return { body: (await a.traffic(name(input), body)) as never };
    }),
  };
}
