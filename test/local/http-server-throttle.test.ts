/**
 * The local host's HTTP front over host.json's throttles, as the Functions host answers them: a request over
 * `maxOutstandingRequests` gets 429 with `X-FUNCTION-SCALEOUT: 1` and no body, and never reaches the function.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HttpThrottle } from '../../local/http-throttle';
import { FunctionsHttpServer, type RouteTarget } from '../../local/http-server';
import { RouteTable } from '../../local/routes';
import { within } from '../support/eventually';

let server: FunctionsHttpServer;
let release: () => void = () => undefined;
let invoked = 0;
let markStarted: () => void = () => undefined;
const started = new Promise<void>((resolve) => (markStarted = resolve));

before(async () => {
  const routes = new RouteTable<RouteTarget>();
  routes.add('hold', ['GET'], { name: 'hold' });
  server = await FunctionsHttpServer.listen({
    host: '127.0.0.1',
    port: 0,
    routePrefix: 'api',
    routes,
    maxBodyBytes: 1024,
    throttle: new HttpThrottle({ maxConcurrentRequests: 1, maxOutstandingRequests: 1 }),
    log: () => undefined,
    invokeHttp: () => {
      invoked++;
      markStarted();
      return new Promise((resolve) => {
        release = () => resolve({ status: 200, headers: {}, cookies: [], body: Buffer.from('ok') });
      });
    },
  });
});

after(() => server.close());

describe('the host throttle (429)', () => {
  it('answers a request over maxOutstandingRequests 429 with X-FUNCTION-SCALEOUT: 1 and no body', async () => {
    const first = fetch(`${server.url}/api/hold`);
    await within(started, 'the first request to reach the function', 10_000);
    const refused = await fetch(`${server.url}/api/hold`);
    assert.equal(refused.status, 429);
    assert.equal(refused.headers.get('x-function-scaleout'), '1');
    assert.equal(await refused.text(), '');
    assert.equal(refused.headers.get('content-type'), null);
    assert.equal(invoked, 1, 'the refused request never reached the function');
    release();
    assert.equal((await first).status, 200);
  });
});
