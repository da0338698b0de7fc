import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parseBicep } from './support/bicep-reader';
import { tableColumn } from './support/contract-fixture';
import { ROLES, roleGrants } from './support/grants';
import { isoDurationSec, documentedSettingNames } from './support/sources';

describe('contract helpers', () => {
  it('reads ISO 8601 durations in seconds, NaN for anything else', () => {
    assert.equal(isoDurationSec('PT21600S'), 21600);
    assert.equal(isoDurationSec('PT10M'), 600);
    assert.equal(isoDurationSec('P7D'), 604800);
    assert.equal(isoDurationSec('P1DT2H30M5S'), 95405);
    for (const bad of ['P', 'PT', '10M', 'PT1.5S', '']) assert.ok(Number.isNaN(isoDurationSec(bad)), bad);
  });

  it('resolves role assignments through the roleIds table, expanding loops, with principal and scope type', () => {
    const file = parseBicep(
      `var roleIds = {
  owner: 'aaaa'
  queue: 'bbbb'
}
var appRoleIds = [
  roleIds.owner
  roleIds.queue
]
resource ns 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: 'x'
}
resource one 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid('a')
  scope: ns
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.owner)
    principalId: appPrincipalId
  }
}
resource many 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for roleId in appRoleIds: {
    name: guid(roleId)
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
      principalId: deployerPrincipalId
    }
  }
]
`,
      'roles.bicep',
    );
    assert.deepEqual(roleGrants(file), [
      { roleId: 'aaaa', principal: 'appPrincipalId', scopeType: 'Microsoft.ServiceBus/namespaces' },
      { roleId: 'aaaa', principal: 'deployerPrincipalId', scopeType: undefined },
      { roleId: 'bbbb', principal: 'deployerPrincipalId', scopeType: undefined },
    ]);
    const unknown = parseBicep(
      "resource r 'Microsoft.Authorization/roleAssignments@2022-04-01' = {\n  properties: {\n    roleDefinitionId: subscriptionResourceId('x', roleIds.nope)\n  }\n}\n",
      'bad.bicep',
    );
    assert.throws(() => roleGrants(unknown), /bad.bicep: cannot resolve role roleIds.nope/);
    assert.match(ROLES.serviceBusDataSender, /^[0-9a-f-]{36}$/);
  });

  it('reads a markdown table column by header, only in tables that have it', () => {
    const md = `| setting | default |
|---|---|
| \`A\` | 1 |

| plan | \`X\` | \`Y\` |
|---|---|---|
| cpu | 64 | 0 |
| gpu | 48 (note) | 1 |
`;
    assert.deepEqual(
      tableColumn(md, 'X').map((r) => r.cell),
      ['64', '48 (note)'],
    );
    assert.deepEqual(tableColumn(md, 'Z'), []);
  });

  it('collects backticked names from the rows of the Settings section only', () => {
    const readme = '## API\n| `NOT_THIS` |\n## Settings\ntext `ALSO_NOT`\n| `A` + `B_C` | `D` |\n## Next\n| `E` |\n';
    assert.deepEqual([...documentedSettingNames(readme)].sort(), ['A', 'B_C', 'D']);
  });
});
