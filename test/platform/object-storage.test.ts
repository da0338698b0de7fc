/**
 * The one object storage (lib/platform/object-storage.ts): a container of the account the `ModelStorage` settings
 * name, by connection string or service URI; unusable settings are `config_invalid` naming the settings and what the
 * container is for (the caller's label, else the container's name).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenCredential } from '@azure/identity';
import { AppError } from '../../lib/errors/errors';
import { blobConfigured, openContainer, type BlobStorageSettings } from '../../lib/platform/object-storage';

const none: BlobStorageSettings = {
  connectionString: undefined,
  blobServiceUri: undefined,
  clientId: undefined,
  container: 'models',
};

/** A credential that is never asked for a token (opening a container makes no call). */
const credential: TokenCredential = { getToken: () => Promise.reject(new Error('no token in this test')) };

function configError(fn: () => unknown): AppError {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError);
    assert.equal(err.code, 'config_invalid');
    return err;
  }
  assert.fail('expected config_invalid');
}

describe('object storage', () => {
  it('opens a container by connection string, and names the account endpoint', () => {
    const s = { ...none, connectionString: 'UseDevelopmentStorage=true' };
    assert.equal(blobConfigured(s), true);
    const { client, endpoint } = openContainer(s, 'decisions');
    assert.equal(client.containerName, 'decisions');
    assert.equal(endpoint, 'http://127.0.0.1:10000/devstoreaccount1');
  });

  it('opens a container by service URI with the credential given', () => {
    const s = { ...none, blobServiceUri: 'https://acct.blob.core.windows.net/' };
    assert.equal(blobConfigured(s), true);
    const { client, endpoint } = openContainer(s, 'models', { credential });
    assert.equal(client.url, 'https://acct.blob.core.windows.net/models');
    assert.equal(endpoint, 'https://acct.blob.core.windows.net');
  });

  it('without settings: config_invalid naming the settings and the label, else the container', () => {
    assert.equal(blobConfigured(none), false);
    const labelled = configError(() => openContainer(none, 'decisions', { label: 'the learning store' }));
    assert.match(
      labelled.message,
      /the learning store needs ModelStorage \(connection string\) or ModelStorage__blobServiceUri/,
    );
    assert.match(configError(() => openContainer(none, 'rulesets')).message, /container "rulesets"/);
  });

  it('a malformed connection string: config_invalid naming ModelStorage and the label', () => {
    const s = { ...none, connectionString: 'not a connection string' };
    const e = configError(() => openContainer(s, 'models', { label: 'the models container' }));
    assert.match(e.message, /ModelStorage connection string .*the models container.* is not valid/);
  });
});
