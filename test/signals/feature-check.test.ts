/**
 * The model upload's feature check: a manifest's features must each be computed by the signals version it names
 * (the shipped one when it names none); otherwise the refusal names the feature, or the version.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import type { ModelManifest } from '../../lib/models/manifest';
import { featureProblems, verifyArtifact } from '../../lib/models/model-folder';
import { compileSignals } from '../../lib/signals/compile-signals';
import { signalsFeatureCheck } from '../../lib/signals/feature-check';
import { CARD_USERS, signalsDoc } from './support';

const shipped = compileSignals(signalsDoc('1.0.0'));
const withCard = compileSignals(signalsDoc('1.1.0', { aggregates: [CARD_USERS] }));
const check = signalsFeatureCheck({
  name: 'default',
  shipped: () => shipped,
  compiled: (v) =>
    v === '1.1.0'
      ? Promise.resolve(withCard)
      : v === '9.9.9'
        ? Promise.reject(new AppError('dependency_unavailable', 'storage down'))
        : Promise.reject(new AppError('not_found', `no signals version ${v}`)),
});

const manifest = (names: readonly string[], signals?: { name: string; version: string }): ModelManifest =>
  ({
    features: names.map((name) => ({ name, definition: '' })),
    ...(signals === undefined ? {} : { signals }),
  }) as unknown as ModelManifest;

describe('model feature check against signals', () => {
  it('accepts the shipped features without a signals version, and a new aggregate with the version that has it', async () => {
    assert.deepEqual(await check(manifest(FEATURE_NAMES)), []);
    const wider = manifest(['card_users_1h', ...FEATURE_NAMES], { name: 'default', version: '1.1.0' });
    assert.deepEqual(await check(wider), []);
  });

  it('refuses a feature the named version does not compute, naming it', async () => {
    assert.deepEqual(await check(manifest(['card_users_1h', ...FEATURE_NAMES])), [
      { path: 'features.0.name', message: '"card_users_1h" is not computed by signals default 1.0.0' },
    ]);
  });

  it('refuses an unknown version or another signals name; a storage failure is retried (thrown)', async () => {
    const unknown = await check(manifest(FEATURE_NAMES, { name: 'default', version: '2.0.0' }));
    assert.equal(unknown[0]?.path, 'signals.version');
    const other = await check(manifest(FEATURE_NAMES, { name: 'other', version: '1.0.0' }));
    assert.equal(other[0]?.path, 'signals.name');
    await assert.rejects(check(manifest(FEATURE_NAMES, { name: 'default', version: '9.9.9' })), /storage down/);
  });

  it('verifyArtifact reports the feature problems with the width check', async () => {
    const m = {
      ...manifest(['card_users_1h', ...FEATURE_NAMES]),
      name: 'fraud',
      version: '1.1.0',
      sha256: 'x',
      input: { name: 'features', shape: [-1, 17], dtype: 'float32' },
    } as unknown as ModelManifest;
    const problems = await featureProblems(m, check);
    assert.throws(
      () => verifyArtifact(m, new Uint8Array(), 'x', problems),
      (e: unknown) =>
        e instanceof AppError &&
        JSON.stringify(e.errors) ===
          JSON.stringify([
            { path: 'features.0.name', message: '"card_users_1h" is not computed by signals default 1.0.0' },
            { path: 'input.shape', message: 'last dimension must be 18 (one per feature)' },
          ]),
    );
  });
});
