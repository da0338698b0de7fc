/**
 * The signals kind on the one rollout (in-process pointer store, a folder of documents): an upload compiles, must
 * match its path and keep every signal what serves reads, and is published and swapped in; each refusal is recorded
 * naming its step and fields (who needs which signal, for compatibility); promote, traffic and rollback refuse an
 * incompatible version the same way; the candidate serves its canary share; readiness waits for the pointer.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { MAX_SIGNALS_BYTES } from '../../lib/signals/signals-document';
import { SIGNALS_TRAFFIC } from '../../lib/signals/signals-traffic';
import { CARD_USERS, signalsDoc, testRollout, type TestRollout } from './support';

const path = (version: string, name = 'default') => `models/features/${name}/${version}.json`;
const bytes = (doc: unknown) => Buffer.from(JSON.stringify(doc));

let t: TestRollout;
before(async () => {
  t = await testRollout();
});
after(() => t.dispose());

/** Uploads `doc` at `blobPath`; the rejection when refused. */
async function refused(blobPath: string, content: Uint8Array) {
  const o = await t.rollout.handleUpload({ blobPath, bytes: content });
  assert.equal(o.kind, 'rejected', JSON.stringify(o));
  return o.kind === 'rejected' ? o.rejection : assert.fail('not rejected');
}

describe('signals rollout', () => {
  it('readiness waits for the pointer to be read, then not at all (the shipped version serves)', async () => {
    assert.equal(t.rollout.waiting()?.kind, 'signals');
    assert.match(t.rollout.waiting()?.reason ?? '', /not been read/);
    await t.rollout.start();
    assert.equal(t.rollout.waiting(), undefined);
    assert.equal((await t.rollout.status('default')).serving, '1.0.0');
  });

  it('an upload publishes and swaps; the same version again is unchanged', async () => {
    const o = await t.rollout.handleUpload({ blobPath: path('1.1.0'), bytes: bytes(signalsDoc('1.1.0')) });
    assert.equal(o.kind, 'published');
    assert.equal(t.serving.active?.version, '1.1.0');
    const s = await t.rollout.status('default');
    assert.deepEqual([s.serving, s.active?.version, s.history.map((v) => v.version)], ['1.1.0', '1.1.0', ['1.0.0']]);
    const again = await t.rollout.handleUpload({ blobPath: path('1.1.0'), bytes: bytes(signalsDoc('1.1.0')) });
    assert.equal(again.kind, 'unchanged');
  });

  it('refusals name their step and every field, and change nothing', async () => {
    const schema = await refused(
      path('1.2.0'),
      bytes(signalsDoc('1.2.0', { aggregates: [{ ...CARD_USERS, window: 'forever' }] })),
    );
    assert.equal(schema.check, 'validate');
    assert.equal(schema.code, 'signals_invalid');
    assert.ok(
      schema.errors.some((e) => e.path === 'aggregates.0.window'),
      JSON.stringify(schema.errors),
    );

    const mismatch = await refused(path('1.2.0'), bytes(signalsDoc('1.3.0')));
    assert.equal(mismatch.code, 'signals_invalid');
    assert.deepEqual(
      mismatch.errors.map((e) => e.path),
      ['version'],
    );

    const json = await refused(path('1.2.0'), Buffer.from('{ not json'));
    assert.equal(json.code, 'signals_invalid');

    const name = await refused(path('1.2.0', 'other'), bytes(signalsDoc('1.2.0')));
    assert.deepEqual([name.check, name.errors[0]?.path], ['name', 'name']);

    const where = await refused('models/features/default/latest.json', bytes(signalsDoc('1.2.0')));
    assert.equal(where.check, 'blobPath');

    const big = await refused(path('1.2.0'), Buffer.alloc(MAX_SIGNALS_BYTES + 1, 32));
    assert.deepEqual([big.check, big.code], ['size', 'payload_too_large']);

    assert.equal(t.serving.active?.version, '1.1.0', 'the previous version keeps serving');
    const listed = (await t.rollout.status('default')).rejections;
    assert.ok(listed.length >= 6 && listed.every((r) => r.by === 'test-instance'));
  });

  it('a version lacking a signal the serving ruleset or model reads is refused on upload, naming who needs what', async () => {
    t.requirements.push(
      { who: 'ruleset fraud-rules 1.1.0', names: ['card_users_1h'] },
      { who: 'model fraud 1.0.0', names: ['amount_log', 'velocity_1h'] },
    );
    const doc = signalsDoc('1.2.0', { features: [{ name: 'amount_log', builtin: 'amount_log' }] });
    const r = await refused(path('1.2.0'), bytes(doc));
    assert.equal(r.check, 'compatibility');
    assert.equal(r.code, 'signals_invalid');
    assert.deepEqual(r.errors, [
      { path: 'signals.card_users_1h', message: 'ruleset fraud-rules 1.1.0 reads it' },
      { path: 'signals.velocity_1h', message: 'model fraud 1.0.0 reads it' },
    ]);
    assert.match(r.reason, /ruleset fraud-rules 1\.1\.0 reads card_users_1h; model fraud 1\.0\.0 reads velocity_1h/);

    const ok = await t.rollout.handleUpload({
      blobPath: path('1.2.0'),
      bytes: bytes(signalsDoc('1.2.0', { aggregates: [CARD_USERS] })),
    });
    assert.equal(ok.kind, 'published');
    assert.equal(t.serving.active?.version, '1.2.0');
  });

  it('promote, traffic and rollback refuse an incompatible version (422 naming the signal) and change nothing', async () => {
    await t.write(signalsDoc('1.3.0')); // lacks card_users_1h, which the ruleset reads
    const lacks = (e: unknown) =>
      e instanceof AppError && e.code === 'signals_invalid' && e.errors[0]?.path === 'signals.card_users_1h';
    await assert.rejects(t.rollout.promote('default', { version: '1.3.0' }), lacks);
    await assert.rejects(t.rollout.traffic('default', { candidate: '1.3.0', canaryPercent: 10 }), lacks);
    // the version before (1.1.0) lacks it too
    await assert.rejects(t.rollout.rollback('default'), lacks);
    const s = await t.rollout.status('default');
    assert.deepEqual([s.active?.version, s.candidate], ['1.2.0', undefined]);
    await assert.rejects(
      t.rollout.promote('default', { version: '9.9.9' }),
      (e) => (e as AppError).code === 'not_found',
    );
    await assert.rejects(t.rollout.status('other'), (e) => (e as AppError).code === 'not_found');
  });

  it('a compatible candidate serves its canary share of users; promote makes it active; rollback goes back', async () => {
    await t.write(
      signalsDoc('1.4.0', { aggregates: [CARD_USERS, { ...CARD_USERS, name: 'card_users_24h', window: '24h' }] }),
    );
    const s = await t.rollout.traffic('default', { candidate: '1.4.0', canaryPercent: 30 });
    assert.deepEqual(s.candidate, { version: '1.4.0', canaryPercent: 30, shadowPercent: 0 });
    assert.equal(s.servingCandidate, '1.4.0');
    for (const user of ['u1', 'u2', 'u3', 'u4', 'u5', 'u6', 'u7', 'u8']) {
      const want = SIGNALS_TRAFFIC.inCanary(user, 30) ? '1.4.0' : '1.2.0';
      assert.equal(t.serving.forUser(user)?.version, want, user);
    }
    const p = await t.rollout.promote('default', { version: '1.4.0' });
    assert.deepEqual(
      [p.serving, p.servingCandidate, p.candidate, p.previous?.version],
      ['1.4.0', undefined, undefined, '1.2.0'],
    );
    const back = await t.rollout.rollback('default');
    assert.equal(back.serving, '1.2.0');
    assert.equal(t.serving.active?.version, '1.2.0');
  });

  it("an upload or a promote older than the active version is refused (every kind's rule), changing nothing", async () => {
    const older = await refused(path('1.0.5'), bytes(signalsDoc('1.0.5')));
    assert.deepEqual([older.check, older.code], ['version', 'signals_invalid']);
    await t.write(signalsDoc('1.0.6', { aggregates: [CARD_USERS] }));
    await assert.rejects(
      t.rollout.promote('default', { version: '1.0.6' }),
      (e: unknown) => e instanceof AppError && e.code === 'conflict' && /older than the active version/.test(e.message),
    );
    assert.equal((await t.rollout.status('default')).serving, '1.2.0');
  });
});
