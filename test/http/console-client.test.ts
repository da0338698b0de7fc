/**
 * The console's typed client (console/src/api.ts `call`, over the route table generated from the contracts): it
 * fills a route's `{parameters}` (encoded), appends the non-empty query values, and sends the route's method and
 * body. Runs the built browser module (dist/console/api.js) with `fetch` replaced.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';

/** What the test uses of the console's module (its types are the browser's; this test compiles without DOM). */
interface ConsoleApi {
  pathOf(name: string, args: object): string;
  call(name: string, args?: object): Promise<unknown>;
}

const load = async (): Promise<ConsoleApi> =>
  (await import(path.resolve(__dirname, '../../console/api.js'))) as ConsoleApi;

describe('console client', () => {
  it('fills path parameters (encoded) and the non-empty query values', async () => {
    const api = await load();
    assert.equal(api.pathOf('casesGet', { params: { id: '1/2' } }), 'cases/1%2F2');
    assert.equal(
      api.pathOf('casesList', { query: { status: 'open', queue: '', rule: undefined } }),
      'cases?status=open',
    );
    assert.equal(api.pathOf('webhooksRemoveSecret', { params: { id: '3', n: '2' } }), 'webhooks/3/secrets/2');
    assert.throws(() => api.pathOf('casesGet', {}), /no value for \{id\}/);
  });

  it("sends the route's method and body and answers the JSON (undefined for a 204)", async () => {
    const api = await load();
    const sent: { url: string; method: string; body: unknown }[] = [];
    const real = globalThis.fetch;
    globalThis.fetch = ((url: string, init: RequestInit) => {
      sent.push({ url, method: String(init.method), body: init.body });
      const status = url.includes('next') ? 204 : 200;
      return Promise.resolve(new Response(status === 204 ? null : '{"case":{"id":"7"}}', { status }));
    }) as typeof fetch;
    try {
      assert.deepEqual(await api.call('casesNotes', { params: { id: '7' }, body: { text: 'hi' } }), {
        case: { id: '7' },
      });
      assert.equal(await api.call('casesNext', { query: { queue: 'general' } }), undefined);
      await api.call('me');
    } finally {
      globalThis.fetch = real;
    }
    assert.deepEqual(sent, [
      { url: '/api/cases/7/notes', method: 'POST', body: '{"text":"hi"}' },
      { url: '/api/cases/next?queue=general', method: 'POST', body: null },
      { url: '/api/me', method: 'GET', body: null },
    ]);
  });
});
