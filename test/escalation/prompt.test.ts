import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { buildPrompt, hashUserId, scrubNote } from '../../lib/escalation/prompt';
import { deep, localResult } from './support/escalator';

describe('escalation prompt', () => {
  it('holds only the needed fields: no ids, the user as a keyed hash, the local verdict', () => {
    const e = deep({ userId: 'alice-123', note: 'please ship fast' });
    const [system, user] = buildPrompt(e, localResult({ decision: 'review', score: 0.5 }), {
      userHashKey: 'secret-key',
      noteMaxChars: 1000,
    });
    assert.equal(system?.role, 'system');
    const payload = JSON.parse(user?.content ?? '{}') as Record<string, unknown>;
    assert.deepEqual(Object.keys(payload).sort(), [
      'amount',
      'channel',
      'country',
      'currency',
      'ipCountry',
      'localModel',
      'merchantCategory',
      'note',
      'timestamp',
      'user',
    ]);
    assert.equal(payload['user'], hashUserId('alice-123', 'secret-key'));
    assert.deepEqual(payload['localModel'], { score: 0.5, decision: 'review', reasons: ['amount_log'] });
    assert.ok(!(user?.content ?? '').includes('alice-123'));
  });

  it('the user hash depends on the key', () => {
    assert.notEqual(hashUserId('u', 'key-a'), hashUserId('u', 'key-b'));
    assert.equal(hashUserId('u', 'key-a'), hashUserId('u', 'key-a'));
  });

  it('cuts the note to the configured length and marks the cut', () => {
    assert.equal(scrubNote('abcdef', 'nobody', 'u_x', 4), 'abcd…');
    assert.equal(scrubNote('abcd', 'nobody', 'u_x', 4), 'abcd');
  });

  it('never lets a card number or the raw user id through (property)', () => {
    const digits = fc.array(fc.integer({ min: 0, max: 9 }), { minLength: 13, maxLength: 19 }).map((d) => d.join(''));
    const sep = fc.constantFrom('', ' ', '-');
    const card = fc.tuple(digits, sep).map(([d, s]) => (d.match(/.{1,4}/g) ?? []).join(s));
    const userId = fc.stringMatching(/^[a-z]{3,8}-[0-9]{2,4}$/);
    fc.assert(
      fc.property(fc.string({ maxLength: 100 }), card, fc.string({ maxLength: 100 }), userId, (pre, c, post, uid) => {
        const out = scrubNote(`${pre} ${c} ${uid} ${post}`, uid, 'u_hash', 4000);
        assert.ok(!out.includes(c), `card ${c} leaked`);
        assert.ok(!out.replace(/\s|-/g, '').includes(c.replace(/\s|-/g, '')), 'card digits leaked');
        assert.ok(!out.includes(uid), 'user id leaked');
      }),
    );
  });
});
