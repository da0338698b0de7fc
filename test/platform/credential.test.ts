/** The process's Azure credentials: one per identity, made once, on first use. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TokenCredential } from '@azure/identity';
import { AzureCredentials } from '../../lib/platform/credential';

describe('Azure credentials', () => {
  const counting = (): { made: (string | undefined)[]; credentials: AzureCredentials } => {
    const made: (string | undefined)[] = [];
    const credentials = new AzureCredentials((id) => {
      made.push(id);
      return { getToken: () => Promise.resolve({ token: `t-${id ?? 'default'}`, expiresOnTimestamp: 0 }) };
    });
    return { made, credentials };
  };

  it('makes one credential per identity, on first use, and hands the same one to every caller', () => {
    const { made, credentials } = counting();
    assert.deepEqual(made, [], 'nothing is made before it is asked for');
    const a: TokenCredential = credentials.for('client-a');
    assert.equal(credentials.for('client-a'), a);
    const d = credentials.for();
    assert.equal(credentials.for(undefined), d);
    assert.equal(credentials.for(''), d, 'an empty client id is the default identity');
    assert.notEqual(credentials.for('client-b'), a);
    assert.deepEqual(made, ['client-a', undefined, 'client-b']);
  });
});
