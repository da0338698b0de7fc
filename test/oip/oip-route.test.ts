/**
 * `oipRoute` (lib/oip/oip-http.ts) registers an Open Inference Protocol contract as `route()` does, with the
 * protocol's answers: every error (thrown, or a subsystem off) is `{ "error" }` JSON with its code's status and
 * `Retry-After` for 503; readiness that is not ready answers 400 `{ error: reason }`; the inference answer is written
 * by `JSON.stringify` (non-finite numbers as `null`); the infer body reaches the handler unvalidated by the contract.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { HttpRequest, InvocationContext, type HttpResponseInit } from '@azure/functions';
import { oipModelInfer, oipModelReady, oipServerReady } from '../../lib/contracts/oip';
import { AppError } from '../../lib/errors/errors';
import type { Uses } from '../../lib/http/route';
import { oipRoute, readyReply } from '../../lib/oip/oip-http';

const context = () => new InvocationContext({ invocationId: 'test' });

function get(url: string, params: Record<string, string> = {}): HttpRequest {
  return new HttpRequest({ method: 'GET', url, params });
}

function post(url: string, body: string, params: Record<string, string>): HttpRequest {
  return new HttpRequest({
    method: 'POST',
    url,
    params,
    body: { string: body },
    headers: { 'content-type': 'application/json' },
  });
}

/** The answer's status, content type and parsed body. */
function answer(r: HttpResponseInit): { status: number | undefined; type: string | undefined; json: unknown } {
  const headers = r.headers as Record<string, string> | undefined;
  const text = typeof r.body === 'string' ? r.body : JSON.stringify(r.jsonBody);
  return { status: r.status, type: headers?.['content-type'], json: JSON.parse(text) as unknown };
}

const on = <S>(s: S): Uses<S> => ({ off: undefined, resolve: () => Promise.resolve(s) });
const [modelReady] = oipModelReady;
const [, inferVersion] = oipModelInfer;

describe('oipRoute', () => {
  it('answers ready 200 with the contract body, and not ready 400 { error: reason }', async () => {
    let ready = true;
    const options = oipRoute(modelReady, async (input) =>
      readyReply(ready ? { ready: true } : { ready: false, reason: 'version 2 is not loaded here' }, {
        name: input.param('name') ?? '',
      }),
    );
    assert.deepEqual(answer(await options.handler(get('http://h/api/v2/models/m/ready', { name: 'm' }), context())), {
      status: 200,
      type: 'application/json',
      json: { name: 'm', ready: true },
    });
    ready = false;
    assert.deepEqual(answer(await options.handler(get('http://h/api/v2/models/m/ready', { name: 'm' }), context())), {
      status: 400,
      type: 'application/json',
      json: { error: 'version 2 is not loaded here' },
    });
  });

  it('answers a thrown error as { error } with its status, Retry-After on 503', async () => {
    const options = oipRoute(oipServerReady, () =>
      Promise.reject(new AppError('overloaded', 'Busy.', { retryAfterSec: 2.5 })),
    );
    const r = await options.handler(get('http://h/api/v2/health/ready'), context());
    assert.deepEqual(answer(r), { status: 503, type: 'application/json', json: { error: 'Busy.' } });
    assert.equal((r.headers as Record<string, string>)['retry-after'], '3');
  });

  it('answers a subsystem off as { error } 404, and the handler never runs', async () => {
    let ran = 0;
    const off = new AppError('not_found', 'OIP is off.');
    const options = oipRoute(
      oipServerReady,
      () => {
        ran++;
        return Promise.resolve({ body: { ready: true as const } });
      },
      { uses: { off, resolve: () => Promise.reject(new Error('not resolved')) } },
    );
    const r = await options.handler(get('http://h/api/v2/health/ready'), context());
    assert.deepEqual(answer(r), { status: 404, type: 'application/json', json: { error: 'OIP is off.' } });
    assert.equal(ran, 0);
  });

  it('infer: the raw body reaches the handler; the answer is JSON.stringify (non-finite as null) with its header', async () => {
    let seen: unknown;
    const options = oipRoute(
      inferVersion,
      async (input, { tag }) => {
        seen = await input.json(1024);
        return {
          body: {
            model_name: input.param('name') ?? '',
            model_version: tag,
            parameters: { batch_size: 1 },
            outputs: [
              { name: 'y', datatype: 'FP32' as const, shape: [3], data: [Number.NaN, 0.5, Number.POSITIVE_INFINITY] },
            ],
          },
          headers: { 'x-model-version': tag },
        };
      },
      { uses: on({ tag: '2' }) },
    );
    const body = '{"inputs":"not a tensor list","extra":1}';
    const r = await options.handler(
      post('http://h/api/v2/models/m/versions/2/infer', body, { name: 'm', version: '2' }),
      context(),
    );
    assert.deepEqual(seen, { inputs: 'not a tensor list', extra: 1 }, 'the contract does not validate the infer body');
    assert.equal(r.status, 200);
    assert.equal((r.headers as Record<string, string>)['x-model-version'], '2');
    assert.equal(
      r.body,
      '{"model_name":"m","model_version":"2","parameters":{"batch_size":1},"outputs":[{"name":"y","datatype":"FP32","shape":[3],"data":[null,0.5,null]}]}',
    );
  });

  it('infer: a body over the limit is 413 { error }', async () => {
    const options = oipRoute(inferVersion, async (input) => {
      await input.json(8);
      throw new Error('unreachable');
    });
    const r = await options.handler(
      post('http://h/api/v2/models/m/infer', '{"inputs":[1,2,3]}', { name: 'm' }),
      context(),
    );
    assert.equal(answer(r).status, 413);
    assert.match((answer(r).json as { error: string }).error, /at most 8 bytes/);
  });
});
