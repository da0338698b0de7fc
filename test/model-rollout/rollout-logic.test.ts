/** Pure logic of model rollout: blob paths, ONNX signatures, pointer transitions, routing buckets, shadow counts. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../lib/errors/errors';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import { compareVersions } from '../../lib/models/model-folder';
import {
  MAX_PREVIOUS,
  promoteVersion,
  publishVersion,
  rollbackVersion,
  setTraffic,
  type FleetState,
  type VersionRecord,
} from '../../lib/model-rollout/fleet-state';
import { parseModelBlobPath } from '../../lib/model-rollout/model-path';
import { warmupBatchSizes } from '../../lib/model-rollout/model-validator';
import { readOnnxSignature, signatureProblems } from '../../lib/inference/onnx-signature';
import { ShadowRecorder, shadowReport } from '../../lib/model-rollout/shadow-stats';
import { BUCKETS, inShare, routingBucket } from '../../lib/model-rollout/traffic-router';
import { bundledManifest, linearModel } from '../support/models';
import { models } from './support/models';

const code = (err: unknown): string => (err instanceof AppError ? err.code : `not an AppError: ${String(err)}`);

describe('blob paths', () => {
  it('accepts {container}/{name}/{version}.onnx and the bare form', () => {
    assert.deepEqual(parseModelBlobPath('models/fraud/1.10.0.onnx', 'models'), { name: 'fraud', version: '1.10.0' });
    assert.deepEqual(parseModelBlobPath('fraud-v2/0.0.1.onnx', 'models'), { name: 'fraud-v2', version: '0.0.1' });
  });

  it('rejects traversal, odd characters, upper case, leading zeros and other shapes', () => {
    const bad = [
      'models/../fraud/1.0.0.onnx',
      'models/fraud/../1.0.0.onnx',
      'models/fraud/1.0.0.onnx.exe',
      'models/Fraud/1.0.0.onnx',
      'models/fraud/01.0.0.onnx',
      'models/fraud/1.0.onnx',
      'models/fraud/1.0.0-rc1.onnx',
      'models/fraud/sub/1.0.0.onnx',
      'models/fraud%2F/1.0.0.onnx',
      'models/fraud\\1.0.0.onnx',
      '/models/fraud/1.0.0.onnx',
      'models/fraud/1.0.0.json',
      'models/fr aud/1.0.0.onnx',
      '',
      'x'.repeat(300),
    ];
    for (const p of bad)
      assert.throws(
        () => parseModelBlobPath(p, 'models'),
        (e) => code(e) === 'model_invalid',
        p,
      );
  });

  it('property: whatever the string, either a valid ref or model_invalid, never anything else', () => {
    fc.assert(
      fc.property(fc.string({ maxLength: 80 }), (s) => {
        try {
          const ref = parseModelBlobPath(s, 'models');
          assert.match(ref.name, /^[a-z][a-z0-9-]*$/);
          assert.match(ref.version, /^\d+\.\d+\.\d+$/);
          assert.ok(!s.includes('..'));
        } catch (e) {
          assert.equal(code(e), 'model_invalid');
        }
      }),
    );
  });
});

describe('ONNX signature', () => {
  it('reads the graph input and output of a generated model', async () => {
    const sig = readOnnxSignature(linearModel({ bias: 0 }));
    assert.deepEqual(
      sig.inputs.map((i) => [i.name, i.elemType, i.dims]),
      [['features', 1, ['N', FEATURE_COUNT]]],
    );
    assert.equal(sig.outputs[0]?.name, 'score');
    assert.deepEqual(signatureProblems(sig, await bundledManifest(), FEATURE_COUNT), []);
  });

  it('names the mismatch of a model whose input is named differently', async () => {
    const problems = signatureProblems(
      readOnnxSignature(models.wrongSignature()),
      await bundledManifest(),
      FEATURE_COUNT,
    );
    assert.deepEqual(
      problems.map((p) => p.path),
      ['input.name'],
    );
  });

  it('names a width that does not fit the featurizer', async () => {
    const problems = signatureProblems(
      readOnnxSignature(linearModel({ bias: 0 })),
      await bundledManifest(),
      FEATURE_COUNT + 1,
    );
    assert.deepEqual(
      problems.map((p) => p.path),
      ['input.shape'],
    );
  });

  it('property: truncated or corrupted models are refused with model_invalid or still parse, never crash', () => {
    const good = linearModel({ bias: 0.3, weight: 0.1 });
    fc.assert(
      fc.property(
        fc.nat(good.length - 1),
        fc.array(fc.tuple(fc.nat(good.length - 1), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
        (cut, flips) => {
          const bytes = good.slice(0, cut === 0 ? good.length : cut);
          for (const [i, v] of flips) if (i < bytes.length) bytes[i] = v;
          try {
            readOnnxSignature(bytes);
          } catch (e) {
            assert.equal(code(e), 'model_invalid');
          }
        },
      ),
    );
    assert.throws(
      () => readOnnxSignature(new TextEncoder().encode('not a model at all')),
      (e) => code(e) === 'model_invalid',
    );
    assert.throws(
      () => readOnnxSignature(new Uint8Array(0)),
      (e) => code(e) === 'model_invalid',
    );
  });
});

describe('warm-up batch sizes', () => {
  it('covers powers of two up to the batcher maximum, and the maximum', () => {
    assert.deepEqual(warmupBatchSizes(64), [1, 2, 4, 8, 16, 32, 64]);
    assert.deepEqual(warmupBatchSizes(24), [1, 2, 4, 8, 16, 24]);
    assert.deepEqual(warmupBatchSizes(1), [1]);
  });
});

async function rec(version: string, sha = `sha-${version}`): Promise<VersionRecord> {
  const manifest = { ...(await bundledManifest()), version };
  return {
    pointer: {
      name: 'fraud',
      version,
      blobPath: `models/fraud/${version}.onnx`,
      sha256: sha,
      source: 'repository',
      publishedBy: 'i1',
      publishedAt: 't',
    },
    manifest,
  };
}
const actor = { by: 'i1', at: '2026-11-30T00:00:00.000Z' };

describe('fleet pointer transitions', () => {
  it('publishes, records the baseline to roll back to, and is idempotent for the same content', async () => {
    const first = publishVersion(undefined, await rec('1.1.0'), {
      mode: 'active',
      baseline: await rec('1.0.0'),
      ...actor,
    });
    assert.equal(first.state.active.version, '1.1.0');
    assert.deepEqual(
      first.state.previous.map((p) => p.version),
      ['1.0.0'],
    );
    assert.equal(first.state.generation, 1);
    const again = publishVersion(first.state, await rec('1.1.0'), { mode: 'active', ...actor });
    assert.equal(again.changed, false);
    const other = await rec('1.1.0', 'other-content');
    assert.throws(
      () => publishVersion(first.state, other, { mode: 'active', ...actor }),
      (e) => code(e) === 'conflict',
      'versions are immutable',
    );
  });

  it('refuses a version that is not newer than the active one', async () => {
    const s = publishVersion(undefined, await rec('1.1.0'), {
      mode: 'active',
      baseline: await rec('1.0.0'),
      ...actor,
    }).state;
    const older = await rec('1.0.5');
    assert.throws(
      () => publishVersion(s, older, { mode: 'active', ...actor }),
      (e) => code(e) === 'model_invalid',
    );
  });

  it('promote, rollback and traffic check their input against the state', async () => {
    let s = publishVersion(undefined, await rec('1.1.0'), {
      mode: 'active',
      baseline: await rec('1.0.0'),
      ...actor,
    }).state;
    s = publishVersion(s, await rec('1.2.0'), { mode: 'candidate', ...actor }).state;
    assert.equal(s.active.version, '1.1.0');
    assert.throws(
      () => promoteVersion(s, '9.9.9', actor),
      (e) => code(e) === 'not_found',
    );
    assert.throws(
      () => promoteVersion(s, '1.0.0', actor),
      (e) => code(e) === 'conflict',
    );
    assert.throws(
      () => promoteVersion(s, '1.1.0', actor),
      (e) => code(e) === 'conflict' && /already the active version/.test((e as Error).message),
      'promoting the active version is refused: it would list itself as its own previous version',
    );
    assert.throws(
      () => setTraffic(s, { candidate: '1.1.0', canaryPercent: 10, shadowPercent: 0 }, actor),
      (e) => code(e) === 'conflict',
    );
    s = setTraffic(s, { candidate: '1.2.0', canaryPercent: 10, shadowPercent: 5 }, actor).state;
    assert.deepEqual(s.traffic, { candidate: '1.2.0', canaryPercent: 10, shadowPercent: 5 });
    assert.equal(
      setTraffic(s, { candidate: '1.2.0', canaryPercent: 0, shadowPercent: 0 }, actor).state.traffic,
      undefined,
    );
    const promoted = promoteVersion(s, '1.2.0', actor).state;
    assert.equal(promoted.active.version, '1.2.0');
    assert.equal(promoted.traffic, undefined, 'promoting the candidate ends its canary');
    const back = rollbackVersion(promoted, actor).state;
    assert.equal(back.active.version, '1.1.0');
    const back2 = rollbackVersion(back, actor).state;
    assert.equal(back2.active.version, '1.0.0');
    assert.throws(
      () => rollbackVersion(back2, actor),
      (e) => code(e) === 'conflict',
    );
  });

  it('property: the active version only moves forward, except through rollback; history and versions stay bounded', async () => {
    const base = await rec('1.0.0');
    const manifest = base.manifest;
    const op = fc.oneof(
      fc.record({ kind: fc.constant('publish' as const), minor: fc.nat(40), candidate: fc.boolean() }),
      fc.record({ kind: fc.constant('promote' as const), minor: fc.nat(40) }),
      fc.record({ kind: fc.constant('rollback' as const) }),
      fc.record({ kind: fc.constant('traffic' as const), minor: fc.nat(40), canary: fc.nat(100) }),
    );
    fc.assert(
      fc.property(fc.array(op, { maxLength: 60 }), (ops) => {
        let s: FleetState | undefined;
        for (const o of ops) {
          const before = s;
          try {
            const v = o.kind === 'rollback' ? '' : `1.${o.minor}.0`;
            const r: VersionRecord = {
              pointer: { ...base.pointer, version: v, sha256: v },
              manifest: { ...manifest, version: v },
            };
            if (o.kind === 'publish')
              s = publishVersion(s, r, { mode: o.candidate ? 'candidate' : 'active', baseline: base, ...actor }).state;
            else if (s === undefined) continue;
            else if (o.kind === 'promote') s = promoteVersion(s, v, actor).state;
            else if (o.kind === 'rollback') s = rollbackVersion(s, actor).state;
            else s = setTraffic(s, { candidate: v, canaryPercent: o.canary, shadowPercent: 0 }, actor).state;
          } catch (e) {
            assert.ok(['model_invalid', 'conflict', 'not_found'].includes(code(e)), code(e));
            continue;
          }
          if (before !== undefined && s !== undefined && s.generation !== before.generation) {
            assert.equal(s.generation, before.generation + 1);
            if (s.lastChange.kind !== 'rollback')
              assert.ok(
                compareVersions(s.active.version, before.active.version) >= 0,
                `${before.active.version} -> ${s.active.version} by ${s.lastChange.kind}`,
              );
          }
          if (s !== undefined) {
            assert.ok(s.previous.length <= MAX_PREVIOUS);
            assert.ok(s.versions[s.active.version] !== undefined, 'the active version stays known');
            if (s.traffic !== undefined)
              assert.ok(s.versions[s.traffic.candidate] !== undefined && s.traffic.candidate !== s.active.version);
          }
        }
      }),
    );
  });
});

describe('routing buckets', () => {
  it('property: a key always lands in the same bucket, within range', () => {
    fc.assert(
      fc.property(fc.string(), fc.string({ maxLength: 8 }), (k, salt) => {
        const b = routingBucket(k, salt);
        assert.ok(Number.isInteger(b) && b >= 0 && b < BUCKETS);
        assert.equal(routingBucket(k, salt), b);
      }),
    );
  });

  it('property: shares are nested (a user in 10 % is in 20 %) and 0 % / 100 % are exact', () => {
    fc.assert(
      fc.property(fc.string(), fc.integer({ min: 0, max: 100 }), fc.integer({ min: 0, max: 100 }), (k, a, b) => {
        const [lo, hi] = a <= b ? [a, b] : [b, a];
        if (inShare(k, 'canary', lo)) assert.ok(inShare(k, 'canary', hi));
        assert.equal(inShare(k, 'canary', 0), false);
        assert.equal(inShare(k, 'canary', 100), true);
      }),
    );
  });

  it('splits users close to the requested share', () => {
    const n = 20_000;
    let inside = 0;
    for (let i = 0; i < n; i++) if (inShare(`user-${i}`, 'canary', 25)) inside++;
    assert.ok(Math.abs(inside / n - 0.25) < 0.02, String(inside / n));
  });
});

describe('shadow statistics', () => {
  it('accumulates side-by-side histograms, means and the mean absolute difference', () => {
    const r = new ShadowRecorder();
    r.record('1.0.0', '1.1.0', 0.05, 0.15);
    r.record('1.0.0', '1.1.0', 0.95, 1);
    r.error('1.0.0', '1.1.0');
    const [c] = r.drain();
    assert.ok(c !== undefined);
    const rep = shadowReport(c);
    assert.equal(rep.active.n, 2);
    assert.equal(rep.active.histogram[0]?.count, 1);
    assert.equal(rep.active.histogram[9]?.count, 1);
    assert.equal(rep.candidate.histogram[1]?.count, 1);
    assert.equal(rep.candidate.histogram[9]?.count, 1, 'a score of exactly 1 is in the last bin');
    assert.equal(rep.meanAbsDiff, 0.075);
    assert.equal(rep.errors, 1);
    assert.deepEqual(r.drain(), [], 'drained');
  });
});
