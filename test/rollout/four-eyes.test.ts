/**
 * The four-eyes decorator of any kind's admin (lib/rollout/four-eyes.ts), on the in-process pointer store: a promote
 * or a canary/shadow share takes effect only when a second lead asks for the same change; the same lead again,
 * another change, or a refused check changes nothing; rollback and ending a split stay direct; a request expires.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { AwaitingApproval, type ArtifactAdmin } from '../../lib/http/admin-routes';
import { AdminBodies } from '../../lib/rollout/admin-bodies';
import { FourEyes, PENDING_TTL_MS, type ApprovalState, type PendingAnswer } from '../../lib/rollout/four-eyes';
import { MemoryPointerStore } from '../../lib/rollout/pointer-store';

const BODIES = new AdminBodies(/^[0-9.]+$/, '1.2.0');

/** An admin that records what reached it. */
function recording(): { admin: ArtifactAdmin; calls: string[] } {
  const calls: string[] = [];
  const admin: ArtifactAdmin = {
    status: (name) => Promise.resolve({ name }),
    promote: (name, body) => (calls.push(`promote ${JSON.stringify(body)}`), Promise.resolve({ name, done: true })),
    rollback: (name) => (calls.push('rollback'), Promise.resolve({ name, done: true })),
    traffic: (name, body) => (calls.push(`traffic ${JSON.stringify(body)}`), Promise.resolve({ name, done: true })),
  };
  return { admin, calls };
}

function setup(check?: (name: string) => Promise<void>): {
  eyes: FourEyes;
  clock: { now: number };
} {
  const clock = { now: Date.parse('2026-01-01T00:00:00Z') };
  const eyes = new FourEyes({
    kind: 'model',
    store: new MemoryPointerStore<ApprovalState>(),
    bodies: BODIES,
    wallNow: () => clock.now,
    ...(check === undefined ? {} : { check }),
  });
  return { eyes, clock };
}

const as = (eyes: FourEyes, inner: ArtifactAdmin, lead: string): ArtifactAdmin => eyes.admin(inner, () => lead);

describe('four-eyes', () => {
  it('a promote takes effect when a second lead asks for the same; the first lead alone changes nothing', async () => {
    const { eyes } = setup();
    const { admin, calls } = recording();
    const first = await as(eyes, admin, 'alice').promote('fraud', { version: '1.2.0' });
    assert.ok(first instanceof AwaitingApproval);
    const body = first.body as PendingAnswer;
    assert.deepEqual(
      [body.pending.change, body.pending.version, body.pending.requestedBy],
      ['promote', '1.2.0', 'alice'],
    );
    const again = await as(eyes, admin, 'alice').promote('fraud', { version: '1.2.0' });
    assert.ok(again instanceof AwaitingApproval, 'the same lead again: still awaiting');
    assert.equal((again.body as PendingAnswer).pending.at, body.pending.at, 'the request kept, not renewed');
    assert.ok((await as(eyes, admin, 'bob').promote('fraud', { version: '1.3.0' })) instanceof AwaitingApproval);
    assert.deepEqual(calls, [], 'nothing reached the rollout');
    assert.deepEqual(await as(eyes, admin, 'bob').promote('fraud', { version: '1.2.0' }), {
      name: 'fraud',
      done: true,
    });
    assert.deepEqual(calls, ['promote {"version":"1.2.0"}']);
    assert.deepEqual(
      (await eyes.pending('fraud')).map((p) => [p.version, p.requestedBy]),
      [['1.3.0', 'bob']],
      'the confirmed request is gone; the other stays',
    );
  });

  it('a canary or shadow needs the same shares from a second lead; ending a split and rollback are direct', async () => {
    const { eyes } = setup();
    const { admin, calls } = recording();
    const split = { candidate: '1.2.0', canaryPercent: 10 };
    assert.ok((await as(eyes, admin, 'alice').traffic('fraud', split)) instanceof AwaitingApproval);
    assert.ok(
      (await as(eyes, admin, 'bob').traffic('fraud', { ...split, canaryPercent: 20 })) instanceof AwaitingApproval,
      'other shares are another change',
    );
    assert.deepEqual(calls, []);
    await as(eyes, admin, 'bob').traffic('fraud', split);
    await as(eyes, admin, 'carol').traffic('fraud', { candidate: '1.2.0' });
    await as(eyes, admin, 'carol').rollback('fraud');
    assert.deepEqual(calls, [
      'traffic {"candidate":"1.2.0","canaryPercent":10}',
      'traffic {"candidate":"1.2.0"}',
      'rollback',
    ]);
  });

  it('refuses a bad body, a refused check or a non-lead before keeping anything', async () => {
    const { eyes } = setup((name) =>
      name === 'fraud' ? Promise.resolve() : Promise.reject(new AppError('not_found', `no ${name}`)),
    );
    const { admin } = recording();
    await assert.rejects(as(eyes, admin, 'alice').promote('fraud', { version: 'x y' }), { code: 'validation_failed' });
    await assert.rejects(as(eyes, admin, 'alice').promote('other', { version: '1.2.0' }), { code: 'not_found' });
    const stranger = eyes.admin(admin, () => {
      throw new AppError('forbidden', 'not a lead');
    });
    await assert.rejects(stranger.promote('fraud', { version: '1.2.0' }), { code: 'forbidden' });
    assert.deepEqual(await eyes.pending('fraud'), []);
    assert.deepEqual(await eyes.pending('other'), []);
  });

  it('a request not confirmed within a day expires', async () => {
    const { eyes, clock } = setup();
    const { admin, calls } = recording();
    await as(eyes, admin, 'alice').promote('fraud', { version: '1.2.0' });
    clock.now += PENDING_TTL_MS + 1;
    assert.deepEqual(await eyes.pending('fraud'), []);
    const again = await as(eyes, admin, 'bob').promote('fraud', { version: '1.2.0' });
    assert.ok(again instanceof AwaitingApproval, 'bob asks anew');
    assert.equal((again.body as PendingAnswer).pending.requestedBy, 'bob');
    assert.deepEqual(calls, []);
  });
});
