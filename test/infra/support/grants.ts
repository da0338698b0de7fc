/**
 * Role assignments declared in a Bicep module, resolved to role definition GUIDs, in the form the
 * modules use: `roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.x)`
 * (or a loop `for roleId in appRoleIds` over such references), `principalId: <param>`, `scope: <resource>`.
 * @module
 */
import { arrayItems, callArgs, stringLiteral } from './bicep-text';
import { property, type BicepFile } from './bicep-reader';

/** Built-in role definition GUIDs the app's connections need. */
export const ROLES = {
  serviceBusDataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0',
  serviceBusDataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39',
  serviceBusDataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419',
  storageBlobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b',
  storageQueueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88',
} as const;

/** One resolved grant. */
export interface Grant {
  readonly roleId: string;
  /** The principalId expression, e.g. `appPrincipalId`. */
  readonly principal: string;
  /** Resource type (without API version) of the scope, or undefined for the deployment scope. */
  readonly scopeType: string | undefined;
}

function roleRef(ref: string, file: BicepFile): string {
  const m = /^roleIds\.([A-Za-z_]\w*)$/.exec(ref.trim());
  const table = file.vars.get('roleIds');
  const id = m === null || table === undefined ? undefined : stringLiteral(property(table, m[1] as string) ?? '');
  if (id === undefined) throw new Error(`${file.file}: cannot resolve role ${ref}`);
  return id;
}

/** Every role assignment of the file, one entry per role (loops expanded). */
export function roleGrants(file: BicepFile): Grant[] {
  const out: Grant[] = [];
  for (const r of file.resources.filter((d) => d.target.startsWith('Microsoft.Authorization/roleAssignments@'))) {
    const def = property(r.body, 'properties.roleDefinitionId') ?? '';
    const principal = (property(r.body, 'properties.principalId') ?? '').trim();
    const scopeSymbol = property(r.body, 'scope')?.trim();
    const scope = file.resources.find((d) => d.symbol === scopeSymbol);
    const scopeType = scope?.target.split('@')[0];
    const arg = (callArgs(def).at(-1) ?? '').trim();
    const loop = /^\[\s*for\s+([A-Za-z_]\w*)\s+in\s+([A-Za-z_]\w*)\s*:$/.exec(r.loop ?? '');
    const refs = loop !== null && arg === loop[1] ? arrayItems(file.vars.get(loop[2] as string) ?? '[]') : [arg];
    for (const ref of refs) out.push({ roleId: roleRef(ref, file), principal, scopeType });
  }
  return out;
}
