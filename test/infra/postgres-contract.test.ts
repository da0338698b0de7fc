/**
 * Infrastructure contract, review cases: the PostgreSQL Flexible Server accepts Entra ID only (no password
 * anywhere), makes the app's identity its Entra user, and every plan's app settings point the case store at it
 * with Entra sign-in, in settings the code reads and accepts.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../lib/config/config';
import { mainBicep, planSettings, INFRA } from './support/sources';
import { property } from './support/bicep-reader';

describe('infra contract: PostgreSQL for the review cases', () => {
  const text = readFileSync(path.join(INFRA, 'modules', 'postgres.bicep'), 'utf8');

  it('declares a Flexible Server with Entra authentication only and the app identity as its user', () => {
    assert.match(text, /resource server 'Microsoft\.DBforPostgreSQL\/flexibleServers@/);
    assert.match(text, /activeDirectoryAuth: 'Enabled'/);
    assert.match(text, /passwordAuth: 'Disabled'/);
    assert.doesNotMatch(text, /administratorLoginPassword/, 'no password');
    assert.match(text, /flexibleServers\/administrators@[\s\S]*?principalType: 'ServicePrincipal'/);
    assert.match(text, /principalName: appIdentityName/);
    assert.match(text, /output user string = appAdmin\.properties\.principalName/);
    const call = mainBicep().modules.find((m) => m.symbol === 'postgres');
    assert.ok(call !== undefined, 'main.bicep calls modules/postgres.bicep');
    assert.equal(property(call.body, 'params.appIdentityName'), 'identity.outputs.name');
    assert.equal(property(call.body, 'params.appPrincipalId'), 'identity.outputs.principalId');
  });

  it("every plan's app settings use the server with Entra sign-in, and the code accepts them", () => {
    for (const { plan, settings } of planSettings()) {
      const value = (n: string): string | undefined => settings.find((s) => s.name === n)?.value;
      assert.equal(value('CASE_STORE'), "'postgres'", plan);
      assert.equal(value('PG_HOST'), 'postgres.outputs.host', plan);
      assert.equal(value('PG_DATABASE'), 'postgres.outputs.databaseName', plan);
      assert.equal(value('PG_USER'), 'postgres.outputs.user', plan);
      assert.equal(value('PG_ENTRA_AUTH'), "'true'", plan);
      assert.ok(!settings.some((s) => /PG_PASSWORD|PGPASSWORD/i.test(s.name)), `${plan}: no password setting`);
      const config = loadConfig({
        CASE_STORE: 'postgres',
        PG_HOST: 'psql-x.postgres.database.azure.com',
        PG_DATABASE: 'cases',
        PG_USER: 'id-api-x',
        PG_ENTRA_AUTH: 'true',
      });
      assert.equal(config.cases.store.kind, 'postgres');
      assert.ok(config.cases.store.kind === 'postgres' && config.cases.store.entraAuth);
    }
  });

  it('the code refuses CASE_STORE=postgres without PG_HOST and PG_USER, naming both', () => {
    assert.throws(
      () => loadConfig({ CASE_STORE: 'postgres' }),
      (e: unknown) =>
        /PG_HOST/.test(String((e as Error).message) + JSON.stringify(e)) &&
        /PG_USER/.test(String((e as Error).message) + JSON.stringify(e)),
    );
  });
});
