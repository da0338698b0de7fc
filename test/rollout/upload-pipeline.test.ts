/**
 * The one upload pipeline with a small kind of its own: the size cap, a refusal at a named step or by a
 * non-transient error recorded in the pointer store (and the outcome, never a throw), a transient failure thrown for
 * the trigger to retry, `unchanged`, and a publication followed by convergence; and how a blob trigger logs each.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { MemoryPointerStore } from '../../lib/rollout/pointer-store';
import {
  describeOutcome,
  UploadPipeline,
  UploadRefused,
  type ArtifactBytes,
  type ArtifactKind,
  type Published,
} from '../../lib/rollout/upload-pipeline';
import { silentLogger } from '../../lib/platform/logger';

/** Documents `kind/{name}/{version}`: the text `ok` validates, `same` is already published, `down` is a transient failure. */
class TextKind implements ArtifactKind<string> {
  readonly kind = 'text';
  readonly name = 'doc';
  readonly maxBytes = 8;
  readonly published: string[] = [];
  parsePath(blobPath: string): { name: string; version: string } {
    const m = /^kind\/([^/]+)\/([^/]+)$/.exec(blobPath);
    if (m === null) throw new UploadRefused('blobPath', new AppError('not_found', 'not kind/{name}/{version}'));
    return { name: m[1] as string, version: m[2] as string };
  }
  read(): Promise<ArtifactBytes> {
    return Promise.resolve({ bytes: Buffer.from('ok'), metadata: {} });
  }
  validate(_ref: unknown, content: ArtifactBytes): Promise<string | 'unchanged'> {
    const text = Buffer.from(content.bytes).toString('utf8');
    if (text === 'same') return Promise.resolve('unchanged');
    if (text === 'down') throw new AppError('dependency_unavailable', 'down', { transient: true });
    if (text !== 'ok')
      throw new AppError('validation_failed', 'not ok', { errors: [{ path: 'text', message: 'bad' }] });
    return Promise.resolve(text);
  }
  publish(ref: { version: string }): Promise<Published> {
    this.published.push(ref.version);
    return Promise.resolve({ generation: this.published.length, mode: 'active' });
  }
}

function pipeline(): {
  run: UploadPipeline<string>;
  kind: TextKind;
  store: MemoryPointerStore<never>;
  converged: () => number;
} {
  const kind = new TextKind();
  const store = new MemoryPointerStore<never>();
  let converged = 0;
  const run = new UploadPipeline({
    kind,
    store,
    follower: { converge: () => Promise.resolve(void converged++) },
    instanceId: 'i1',
    wallNow: () => Date.parse('2026-12-01T00:00:00Z'),
    logger: silentLogger,
  });
  return { run, kind, store, converged: () => converged };
}

const upload = (version: string, text: string): { blobPath: string; bytes: Buffer } => ({
  blobPath: `kind/doc/${version}`,
  bytes: Buffer.from(text),
});

describe('upload pipeline', () => {
  it('publishes a valid upload and converges this instance', async () => {
    const p = pipeline();
    const o = await p.run.handle(upload('1.0.0', 'ok'));
    assert.deepEqual(o, { kind: 'published', name: 'doc', version: '1.0.0', generation: 1, mode: 'active' });
    assert.equal(p.converged(), 1);
    assert.deepEqual(describeOutcome('text', o), {
      warn: false,
      text: 'text published: doc@1.0.0 as active (generation 1)',
    });
  });

  it('reads an upload delivered by reference through the kind', async () => {
    const p = pipeline();
    assert.equal((await p.run.handle({ blobPath: 'kind/doc/1.0.1' })).kind, 'published');
  });

  it('records refusals (size, a named step, a validation error) as outcomes, newest first', async () => {
    const p = pipeline();
    const big = await p.run.handle(upload('1.1.0', 'x'.repeat(9)));
    const path = await p.run.handle({ blobPath: 'elsewhere', bytes: Buffer.from('ok') });
    const bad = await p.run.handle(upload('1.2.0', 'bad'));
    const checks = [big, path, bad].map((o) =>
      o.kind === 'rejected' ? [o.rejection.check, o.rejection.code] : o.kind,
    );
    assert.deepEqual(checks, [
      ['size', 'payload_too_large'],
      ['blobPath', 'not_found'],
      ['validate', 'validation_failed'],
    ]);
    const listed = await p.store.rejections('doc');
    assert.deepEqual(
      listed.map((r) => [r.version, r.check, r.by, r.at]),
      [
        ['1.2.0', 'validate', 'i1', '2026-12-01T00:00:00.000Z'],
        ['?', 'blobPath', 'i1', '2026-12-01T00:00:00.000Z'],
        ['1.1.0', 'size', 'i1', '2026-12-01T00:00:00.000Z'],
      ],
    );
    assert.deepEqual(listed[0]?.errors, [{ path: 'text', message: 'bad' }]);
    assert.deepEqual(p.kind.published, [], 'nothing published');
    assert.equal(describeOutcome('text', bad).warn, true);
    assert.match(
      describeOutcome('text', bad).text,
      /^text rejected: doc@1\.2\.0 \(kind\/doc\/1\.2\.0\) failed validate/,
    );
  });

  it('answers unchanged without publishing, and throws a transient failure for the trigger to retry', async () => {
    const p = pipeline();
    assert.deepEqual(await p.run.handle(upload('1.0.0', 'same')), { kind: 'unchanged', name: 'doc', version: '1.0.0' });
    await assert.rejects(p.run.handle(upload('1.3.0', 'down')), (e) => e instanceof AppError && e.transient);
    assert.deepEqual(await p.store.rejections('doc'), []);
    assert.deepEqual(p.kind.published, []);
  });
});
