/** VersionLeases: a version's backend is disposed once, after the owner's hold and every lease have ended. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { InferenceBackend } from '../../lib/inference/backend';
import { VersionLeases } from '../../lib/inference/version-leases';
import type { ModelManifest } from '../../lib/models/manifest';

const manifest = { name: 'fraud', version: '1.0.0' } as ModelManifest;

/** A backend that only counts disposals; its disposal settles when `finish` is called. */
function backend(): { backend: InferenceBackend; disposed: () => number; finish: () => void } {
  let disposed = 0;
  let finish = (): void => undefined;
  const b = {
    dispose: () => {
      disposed++;
      return new Promise<void>((resolve) => (finish = resolve));
    },
  } as unknown as InferenceBackend;
  return { backend: b, disposed: () => disposed, finish: () => finish() };
}

describe('VersionLeases', () => {
  it('disposes after the last hold ends, once, however often a lease is released', async () => {
    const released: string[] = [];
    const versions = new VersionLeases((m) => released.push(m.version));
    const b = backend();
    const held = versions.hold(manifest, b.backend);
    const a = held.lease();
    const c = held.lease();
    held.drop();
    a.release();
    a.release();
    assert.equal(b.disposed(), 0, 'a lease is still out');
    assert.equal(c.manifest, manifest);
    c.release();
    assert.equal(b.disposed(), 1);
    let drained = false;
    const wait = versions.drained().then(() => (drained = true));
    await new Promise((r) => setImmediate(r));
    assert.equal(drained, false, 'drained waits for the disposal under way');
    assert.deepEqual(released, []);
    b.finish();
    await wait;
    assert.deepEqual(released, ['1.0.0']);
    c.release();
    assert.equal(b.disposed(), 1);
  });
});
