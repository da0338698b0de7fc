/**
 * The register-helper (lib/http/route.ts) over a small contract: the `app.http` options come from the contract
 * (template, method, auth level, `people` resolved by the adapter); an unknown or repeated query parameter is refused
 * before the handler runs, naming it; the body is validated by the contract's schema (every bad field named,
 * `validation_failed`), an optional body may be absent; the answer is the serializer's JSON (an undeclared property
 * dropped), a reply without a body has none; a handler's error is a problem document.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpRequest, InvocationContext, type HttpHandler, type HttpResponseInit } from '@azure/functions';
import { z } from 'zod';
import { AppError } from '../../lib/errors/errors';
import { defineContract } from '../../lib/http/contract';
import { route } from '../../lib/http/route';

const thing = defineContract({
  name: 'thingAdd',
  method: 'POST',
  route: 'things/{id}',
  auth: 'people',
  summary: 'Adds a thing.',
  params: z.strictObject({ id: z.string() }),
  query: z.strictObject({ dry: z.string().optional(), mode: z.string().optional() }),
  body: z.strictObject({ name: z.string().min(1), size: z.number().int() }),
  bodyLimitBytes: 256,
  status: 201,
  response: z.strictObject({ id: z.string(), name: z.string(), note: z.string().optional() }),
});

const optional = defineContract({
  name: 'thingPoke',
  method: 'POST',
  route: 'things/{id}/poke',
  auth: 'function',
  summary: 'Pokes a thing.',
  body: z.strictObject({ how: z.string().optional() }),
  bodyOptional: true,
  status: 204,
});

function request(url: string, body?: unknown): HttpRequest {
  return new HttpRequest({
    method: 'POST',
    url,
    params: { id: '7' },
    ...(body === undefined
      ? {}
      : { body: { string: JSON.stringify(body) }, headers: { 'content-type': 'application/json' } }),
  });
}

async function call(handler: HttpHandler, req: HttpRequest): Promise<HttpResponseInit> {
  return handler(req, new InvocationContext({ invocationId: 'test' }));
}

const problemOf = (r: HttpResponseInit) => r.jsonBody as { code: string; errors: { path: string; message: string }[] };

describe('route()', () => {
  const options = route(
    thing,
    async (input) => {
      const body = await input.body();
      if (body.name === 'boom') throw new AppError('conflict', 'No.');
      return { body: { id: input.param('id') ?? '', name: body.name, extra: 'not declared' } as never };
    },
    { people: 'anonymous' },
  );

  it('takes template, method and auth level from the contract', () => {
    assert.equal(options.route, 'things/{id}');
    assert.deepEqual(options.methods, ['POST']);
    assert.equal(options.authLevel, 'anonymous');
    assert.throws(() => route(thing, () => Promise.resolve({})), /people/);
  });

  it('answers with the serializer: the declared properties, the contract status, JSON headers', async () => {
    const r = await call(options.handler, request('http://h/api/things/7?dry=1', { name: 'a', size: 2 }));
    assert.equal(r.status, 201);
    assert.equal(r.body, '{"id":"7","name":"a"}');
    assert.equal((r.headers as Record<string, string>)['content-type'], 'application/json');
    assert.equal((r.headers as Record<string, string>)['cache-control'], 'no-store');
  });

  it('refuses unknown and repeated query parameters before the handler runs, naming each', async () => {
    const r = await call(options.handler, request('http://h/api/things/7?dri=1&mode=a&mode=b', { bad: 1 }));
    assert.equal(r.status, 400);
    assert.equal(problemOf(r).code, 'validation_failed');
    assert.deepEqual(problemOf(r).errors, [
      { path: 'dri', message: 'unknown query parameter (this route reads dry, mode)' },
      { path: 'mode', message: 'must be given once' },
    ]);
  });

  it("validates the body with the contract's schema, naming every bad field", async () => {
    const r = await call(options.handler, request('http://h/api/things/7', { name: '', size: 1.5, extra: true }));
    assert.equal(r.status, 400);
    assert.deepEqual(
      problemOf(r)
        .errors.map((e) => e.path)
        .sort(),
      ['extra', 'name', 'size'],
    );
    const big = await call(options.handler, request('http://h/api/things/7', { name: 'x'.repeat(300), size: 1 }));
    assert.equal(big.status, 413);
  });

  it("answers a handler's error as a problem", async () => {
    const r = await call(options.handler, request('http://h/api/things/7', { name: 'boom', size: 1 }));
    assert.equal(r.status, 409);
    assert.equal(problemOf(r).code, 'conflict');
  });

  it('an optional body may be absent; a reply without a body has none', async () => {
    const seen: unknown[] = [];
    const poke = route(optional, async (input) => {
      seen.push(await input.body());
      return {};
    });
    const none = await call(poke.handler, request('http://h/api/things/7/poke'));
    assert.equal(none.status, 204);
    assert.equal(none.body, undefined);
    const given = await call(poke.handler, request('http://h/api/things/7/poke', { how: 'gently' }));
    assert.equal(given.status, 204);
    const bad = await call(poke.handler, request('http://h/api/things/7/poke', { why: 1 }));
    assert.equal(bad.status, 400);
    assert.deepEqual(seen, [undefined, { how: 'gently' }]);
  });
});
