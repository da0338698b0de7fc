/**
 * Functions that use subsystems (lib/http/route.ts `uses`, `using`): the handler receives them, resolved at each
 * invocation; when one is off (decided at registration), the route answers that problem before it reads anything of
 * the request (not even a bad query or body) and the handler never runs, nor is anything resolved; a trigger's
 * invocation fails with that problem.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { z } from 'zod';
import { AppError } from '../../lib/errors/errors';
import { defineContract } from '../../lib/http/contract';
import { route, using, type Uses } from '../../lib/http/route';

const echo = defineContract({
  name: 'thingEcho',
  method: 'POST',
  route: 'things/{id}/echo',
  auth: 'function',
  summary: 'Echoes a thing.',
  query: z.strictObject({ loud: z.string().optional() }),
  body: z.strictObject({ name: z.string() }),
  status: 200,
  response: z.strictObject({ name: z.string(), by: z.string() }),
});

interface Things {
  readonly things: { readonly owner: string };
}

/** A `Uses` whose resolutions are counted; off with `off`. */
function uses(off?: AppError): Uses<Things> & { resolved: number } {
  const u = {
    off,
    resolved: 0,
    resolve: () => {
      u.resolved++;
      return Promise.resolve({ things: { owner: 'store-1' } });
    },
  };
  return u;
}

function request(url: string, body: unknown): HttpRequest {
  return new HttpRequest({
    method: 'POST',
    url,
    params: { id: '7' },
    body: { string: JSON.stringify(body) },
    headers: { 'content-type': 'application/json' },
  });
}

const context = () => new InvocationContext({ invocationId: 'test' });
const problemOf = (r: HttpResponseInit) => r.jsonBody as { code: string; detail: string };

describe('route() with uses', () => {
  it('the handler receives the subsystems, resolved at each invocation', async () => {
    const u = uses();
    const options = route(
      echo,
      async (input, { things }) => ({ body: { name: (await input.body()).name, by: things.owner } }),
      { uses: u },
    );
    assert.equal(u.resolved, 0, 'nothing resolved at registration');
    const r = await options.handler(request('http://h/api/things/7/echo', { name: 'a' }), context());
    assert.equal(r.status, 200);
    assert.equal(r.body, '{"name":"a","by":"store-1"}');
    await options.handler(request('http://h/api/things/7/echo', { name: 'b' }), context());
    assert.equal(u.resolved, 2);
  });

  it('a subsystem off: the problem decided at registration, before the query and body are read; no handler', async () => {
    const u = uses(new AppError('not_found', 'Things are off (THING_STORE=none): set THING_STORE to turn them on.'));
    let ran = 0;
    const options = route(
      echo,
      () => {
        ran++;
        return Promise.resolve({});
      },
      { uses: u },
    );
    assert.equal(options.route, 'things/{id}/echo', 'still registered, on its route');
    for (const r of [
      await options.handler(request('http://h/api/things/7/echo', { name: 'a' }), context()),
      await options.handler(request('http://h/api/things/7/echo?bad=1', { wrong: true }), context()),
    ]) {
      assert.equal(r.status, 404);
      assert.equal(problemOf(r).code, 'not_found');
      assert.match(problemOf(r).detail, /THING_STORE/);
    }
    assert.equal(ran, 0, 'the handler never ran');
    assert.equal(u.resolved, 0, 'nothing was resolved');
  });
});

describe('using() (triggers)', () => {
  it('on: the handler receives the subsystems, then its arguments', async () => {
    const handler = using(uses(), ({ things }, message: string) => Promise.resolve(`${things.owner}:${message}`));
    assert.equal(await handler('m-1'), 'store-1:m-1');
  });

  it('off: every invocation fails with the problem decided at registration; the handler never runs', async () => {
    const off = new AppError('not_found', 'Things are off (THING_STORE=none).');
    const u = uses(off);
    let ran = 0;
    const handler = using(u, () => Promise.resolve(ran++));
    await assert.rejects(handler(), (e) => e === off);
    assert.equal(ran, 0);
    assert.equal(u.resolved, 0);
  });
});
