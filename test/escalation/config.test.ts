import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadConfig } from '../../lib/config/config';
import { AppError } from '../../lib/errors/errors';

const base = { AZURE_OPENAI_ENDPOINT: 'https://res.openai.azure.com', AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini' };

function invalidPaths(env: Record<string, string>): string[] {
  try {
    loadConfig(env);
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 'config_invalid');
    return (err.errors ?? []).map((e) => e.path).sort();
  }
  assert.fail('expected config_invalid');
}

describe('escalation settings', () => {
  it('off unless AZURE_OPENAI_ENDPOINT and AZURE_OPENAI_DEPLOYMENT are set', () => {
    assert.equal(loadConfig({}).escalation, undefined);
  });

  it('defaults: GA api version with structured outputs, 200-char notes, 5 % cap, 1.5 s budget, 30 s cooldown', () => {
    const e = loadConfig(base).escalation;
    assert.ok(e !== undefined);
    assert.equal(e.apiVersion, '2024-10-21');
    assert.equal(e.noteMinChars, 200);
    assert.equal(e.noteMaxChars, 1000);
    assert.equal(e.maxShare, 0.05);
    assert.equal(e.windowMs, 60_000);
    assert.equal(e.timeoutMs, 1500);
    assert.equal(e.breakerCooldownMs, 30_000);
    assert.equal(e.band, undefined);
    assert.deepEqual(e.auth, { mode: 'entra', managedIdentityClientId: undefined });
    assert.deepEqual(e.userHashKey, { mode: 'random' });
    assert.ok(Object.isFrozen(e));
  });

  it('auth in order: Entra (managed identity) → Key Vault key → AZURE_OPENAI_API_KEY', () => {
    const all = {
      ...base,
      AZURE_CLIENT_ID: 'mi-client',
      KEY_VAULT_URL: 'https://v.vault.azure.net',
      AZURE_OPENAI_KEY_SECRET_NAME: 'aoai-key',
      AZURE_OPENAI_API_KEY: 'local-key',
    };
    assert.deepEqual(loadConfig(all).escalation?.auth, { mode: 'entra', managedIdentityClientId: 'mi-client' });
    const { AZURE_CLIENT_ID: _mi, ...noMi } = all;
    assert.deepEqual(loadConfig(noMi).escalation?.auth, {
      mode: 'keyvault',
      vaultUrl: 'https://v.vault.azure.net',
      secretName: 'aoai-key',
    });
    const { AZURE_OPENAI_KEY_SECRET_NAME: _s, ...keyOnly } = noMi;
    assert.deepEqual(loadConfig(keyOnly).escalation?.auth, { mode: 'key', apiKey: 'local-key' });
  });

  it('fails fast naming every bad setting', () => {
    assert.deepEqual(
      invalidPaths({
        ...base,
        OPENAI_API_VERSION: '2024-06-01',
        ESCALATION_MAX_SHARE: '2',
        ESCALATION_TIMEOUT_MS: 'soon',
      }),
      ['ESCALATION_MAX_SHARE', 'ESCALATION_TIMEOUT_MS', 'OPENAI_API_VERSION'],
    );
    assert.deepEqual(invalidPaths({ AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini' }), ['AZURE_OPENAI_ENDPOINT']);
    assert.deepEqual(invalidPaths({ ...base, AZURE_OPENAI_KEY_SECRET_NAME: 'k' }), ['KEY_VAULT_URL']);
    assert.deepEqual(invalidPaths({ ...base, ESCALATION_BAND_LOW: '0.5', ESCALATION_BAND_HIGH: '0.4' }), [
      'ESCALATION_BAND_HIGH',
    ]);
    assert.deepEqual(invalidPaths({ ...base, ESCALATION_USER_HASH_KEY: 'short' }), ['ESCALATION_USER_HASH_KEY']);
  });

  it('accepts 2024-08-01-preview, the first version with json_schema', () => {
    assert.equal(
      loadConfig({ ...base, OPENAI_API_VERSION: '2024-08-01-preview' }).escalation?.apiVersion,
      '2024-08-01-preview',
    );
  });

  it('never puts a setting value in the error (keys are secrets)', () => {
    assert.throws(
      () => loadConfig({ ...base, ESCALATION_USER_HASH_KEY: 'topsecret' }),
      (err: unknown) => {
        assert.ok(err instanceof AppError, `expected an AppError, got ${String(err)}`);
        assert.equal(err.code, 'config_invalid');
        assert.deepEqual(
          err.errors.map((e) => e.path),
          ['ESCALATION_USER_HASH_KEY'],
        );
        const shown = JSON.stringify({ message: err.message, errors: err.errors });
        assert.ok(!shown.includes('topsecret'), `the value reached the error: ${shown}`);
        return true;
      },
    );
  });
});
