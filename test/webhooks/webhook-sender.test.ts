/**
 * One webhook attempt: a 2xx is a delivery; another status, a redirect (not followed) and a network error are failed
 * attempts named by status or code, never by message (it would hold the url); the timeout (fired by the injected
 * timers, capped at 30 s) aborts the request and is named `timeout`.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Timers } from '../../lib/platform/timers';
import { sendWebhook, type Fetch } from '../../lib/webhooks/webhook-sender';

const HEADERS = { 'webhook-id': 'msg_1', 'webhook-timestamp': '1', 'webhook-signature': 'v1,x' };

/** Timers that only record what was asked; the test fires them. */
function manualTimers(): Timers & { asked: number[]; fire(): void } {
  const pending: (() => void)[] = [];
  const asked: number[] = [];
  return {
    asked,
    setTimeout: (fn, ms) => {
      asked.push(ms);
      pending.push(fn);
      return pending.length;
    },
    clearTimeout: () => undefined,
    fire: () => pending.forEach((f) => f()),
  };
}

const answering =
  (status: number): Fetch =>
  () =>
    Promise.resolve(new Response(status === 204 ? null : 'ok', { status }));

describe('a webhook attempt', () => {
  it('2xx delivers; other statuses and redirects fail, named by status', async () => {
    const o = (fetch: Fetch) => ({ fetch, timers: manualTimers(), timeoutMs: 10_000 });
    assert.deepEqual(await sendWebhook('https://m.example/h', HEADERS, '{}', o(answering(204))), {
      ok: true,
      status: 204,
    });
    assert.deepEqual(await sendWebhook('https://m.example/h', HEADERS, '{}', o(answering(503))), {
      ok: false,
      error: 'http_503',
      status: 503,
    });
    assert.deepEqual(await sendWebhook('https://m.example/h', HEADERS, '{}', o(answering(302))), {
      ok: false,
      error: 'http_302',
      status: 302,
    });
  });

  it('sends the payload with the signed headers, POST, no redirect following', async () => {
    let seen: RequestInit | undefined;
    const fetch: Fetch = (_url, init) => {
      seen = init;
      return Promise.resolve(new Response(null, { status: 200 }));
    };
    await sendWebhook('https://m.example/h', HEADERS, '{"a":1}', { fetch, timers: manualTimers(), timeoutMs: 1000 });
    assert.equal(seen?.method, 'POST');
    assert.equal(seen?.body, '{"a":1}');
    assert.equal(seen?.redirect, 'manual');
    assert.deepEqual(
      { ...(seen?.headers as Record<string, string>), 'user-agent': undefined },
      { ...HEADERS, 'content-type': 'application/json', 'user-agent': undefined },
    );
  });

  it('a network error is named by its code, never its message', async () => {
    const fetch: Fetch = () =>
      Promise.reject(
        Object.assign(new TypeError('fetch failed https://secret.example/?token=abc'), {
          cause: { code: 'ECONNREFUSED' },
        }),
      );
    assert.deepEqual(
      await sendWebhook('https://m.example/h', HEADERS, '{}', { fetch, timers: manualTimers(), timeoutMs: 1000 }),
      {
        ok: false,
        error: 'ECONNREFUSED',
      },
    );
  });

  it('the timeout aborts the request, is named timeout, and is capped at 30 s', async () => {
    const timers = manualTimers();
    const fetch: Fetch = (_url, init) =>
      new Promise((_, reject) => init.signal?.addEventListener('abort', () => reject(new Error('aborted'))));
    const attempt = sendWebhook('https://m.example/h', HEADERS, '{}', { fetch, timers, timeoutMs: 120_000 });
    assert.deepEqual(timers.asked, [30_000]);
    timers.fire();
    assert.deepEqual(await attempt, { ok: false, error: 'timeout' });
  });
});
