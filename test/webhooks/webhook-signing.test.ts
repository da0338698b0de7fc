/**
 * Webhook signing, backoff and input parsing (pure): every attempt's headers verify with the `standardwebhooks`
 * package's own `Webhook.verify` under each active secret of the endpoint and under no other; the signature header
 * holds one signature per secret; the backoff doubles to its cap and retries for at least the window; urls, events,
 * secrets and the deliveries query are refused naming the field.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Webhook } from 'standardwebhooks';
import { AppError } from '../../lib/errors/errors';
import { afterFailure, attemptTimes, DEFAULT_BACKOFF, retryDelay } from '../../lib/webhooks/webhook-backoff';
import {
  parseCreateBody,
  parseDeliveriesQuery,
  parseSecretBody,
  urlProblem,
} from '../../lib/webhooks/webhook-requests';
import { generateSecret, secretProblem, signedHeaders } from '../../lib/webhooks/webhook-signing';

const HOUR = 3_600_000;

const fieldsOf = (fn: () => unknown): string[] => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 'validation_failed', `unexpected ${String(err)}`);
    return err.errors.map((e) => e.path);
  }
  return assert.fail('expected validation_failed');
};

describe('webhook signing (Standard Webhooks)', () => {
  it('headers verify with Webhook.verify under each active secret, and not under another', () => {
    const secrets = [generateSecret(), generateSecret(), generateSecret()];
    const payload = JSON.stringify({ type: 'review.opened', data: { transactionId: 'tx-1' } });
    const h = signedHeaders('msg_1', Date.now(), payload, secrets);
    assert.equal(h['webhook-id'], 'msg_1');
    assert.equal(h['webhook-signature'].split(' ').length, 3, 'one signature per secret, space-separated');
    for (const s of secrets) assert.deepEqual(new Webhook(s).verify(payload, { ...h }), JSON.parse(payload));
    assert.throws(() => new Webhook(generateSecret()).verify(payload, { ...h }), /No matching signature/);
    assert.throws(() => new Webhook(secrets[0] ?? '').verify(`${payload} `, { ...h }), /No matching signature/);
  });

  it('property: any payload, id and set of secrets verifies under each secret', () => {
    fc.assert(
      fc.property(
        fc.string({ maxLength: 200 }),
        fc.stringMatching(/^msg_[0-9]{1,12}$/),
        fc.array(fc.uint8Array({ minLength: 24, maxLength: 64 }), { minLength: 1, maxLength: 5 }),
        (payload, id, keys) => {
          const secrets = keys.map((k) => `whsec_${Buffer.from(k).toString('base64')}`);
          for (const s of secrets) assert.equal(secretProblem(s), undefined);
          const h = signedHeaders(id, Date.now(), payload, secrets);
          for (const s of secrets) new Webhook(s).verify(payload, { ...h }, { jsonParse: false });
        },
      ),
      { numRuns: 100 },
    );
  });

  it('a generated secret is whsec_ and 32 bytes; bad secrets are named', () => {
    const s = generateSecret();
    assert.match(s, /^whsec_[A-Za-z0-9+/]+=*$/);
    assert.equal(Buffer.from(s.slice(6), 'base64').length, 32);
    assert.equal(secretProblem(s), undefined);
    for (const bad of ['', 'whsec_', 'whsec_c2hvcnQ=', 'abc', `whsec_${'A'.repeat(200)}`, 'whsec_!!!!'])
      assert.notEqual(secretProblem(bad), undefined, bad);
  });
});

describe('webhook backoff', () => {
  it('doubles from 10 s to its 1 h cap', () => {
    assert.deepEqual(
      [1, 2, 3, 4, 9, 10, 20, 100].map((n) => retryDelay(n)),
      [10_000, 20_000, 40_000, 80_000, 2_560_000, HOUR, HOUR, HOUR],
    );
  });

  it('a delivery that always fails is tried for at least 24 h, then dead-lettered', () => {
    const t0 = Date.parse('2026-12-01T00:00:00Z');
    const times = attemptTimes(t0);
    const last = times[times.length - 1] ?? t0;
    assert.ok(last - t0 >= 24 * HOUR, `last attempt ${(last - t0) / HOUR} h after the first`);
    assert.ok(last - t0 < 25 * HOUR);
    assert.equal(afterFailure(times.length, last, t0).dead, true);
    assert.ok(times.length > 20 && times.length < 40, `${times.length} attempts`);
  });

  it('property: retries never come sooner as attempts grow, and never past the cap', () => {
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 1000 }), (n) => {
        assert.ok(retryDelay(n + 1) >= retryDelay(n));
        assert.ok(retryDelay(n) <= DEFAULT_BACKOFF.maxMs && retryDelay(n) >= DEFAULT_BACKOFF.firstMs);
      }),
    );
  });
});

describe('webhook requests', () => {
  it('urls: https anywhere, http only to loopback, no credentials or fragment', () => {
    for (const ok of [
      'https://merchant.example/hooks',
      'http://127.0.0.1:8080/h',
      'http://localhost/h',
      'http://[::1]:9/',
    ])
      assert.equal(urlProblem(ok), undefined, ok);
    for (const bad of [
      'http://merchant.example/hooks',
      'ftp://x/',
      'not a url',
      'https://user:pw@merchant.example/',
      'https://merchant.example/#x',
      `https://merchant.example/${'a'.repeat(3000)}`,
      'http://10.0.0.1/',
    ])
      assert.notEqual(urlProblem(bad), undefined, bad);
  });

  it('POST /api/webhooks names every bad or unknown field', () => {
    assert.deepEqual(parseCreateBody({ url: 'https://m.example/h', events: ['review.opened'] }), {
      url: 'https://m.example/h',
      events: ['review.opened'],
    });
    assert.deepEqual(
      fieldsOf(() => parseCreateBody({ url: 'http://m.example/', events: ['review.lost'], secret: 'x', extra: 1 })),
      ['url', 'events.0', 'secret', 'extra'],
    );
    assert.deepEqual(
      fieldsOf(() => parseCreateBody({ url: 'https://m.example/', events: [] })),
      ['events'],
    );
    assert.deepEqual(
      fieldsOf(() => parseCreateBody({ url: 'https://m.example/', events: ['review.opened', 'review.opened'] })),
      ['events'],
    );
    assert.deepEqual(
      fieldsOf(() => parseCreateBody({})),
      ['url', 'events'],
    );
    assert.deepEqual(
      fieldsOf(() => parseCreateBody('x')),
      [''],
    );
    assert.deepEqual(parseSecretBody(undefined), {});
    assert.deepEqual(
      fieldsOf(() => parseSecretBody({ secret: 'whsec_x' })),
      ['secret'],
    );
  });

  it('GET /api/webhooks/deliveries refuses unknown and bad parameters', () => {
    const q = (o: Record<string, string>) => {
      const p = new URLSearchParams(o);
      return { get: (k: string) => p.get(k), keys: () => p.keys() };
    };
    assert.deepEqual(parseDeliveriesQuery(q({})), { state: 'dead', limit: 50 });
    assert.deepEqual(parseDeliveriesQuery(q({ state: 'pending', limit: '10', before: '42' })), {
      state: 'pending',
      limit: 10,
      before: '42',
    });
    assert.deepEqual(
      fieldsOf(() => parseDeliveriesQuery(q({ state: 'x', limit: '0', before: 'a', sort: 'id' }))),
      ['sort', 'state', 'limit', 'before'],
    );
  });
});
