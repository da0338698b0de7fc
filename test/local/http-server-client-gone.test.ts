/**
 * Issue 36: the HTTP front's slot accounting when a client goes away, on a real server and real sockets
 * (`local/http-server.ts` over `local/http-throttle.ts`), and host.json's `functionTimeout`. One slot
 * (`maxConcurrentRequests: 1`), so a leaked slot shows at once: the next request would wait forever.
 */
import assert from 'node:assert/strict';
import * as http from 'node:http';
import * as net from 'node:net';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'node:test';
import { ClientGoneError, HttpThrottle } from '../../local/http-throttle';
import { FunctionsHttpServer, readBody, type RouteTarget } from '../../local/http-server';
import type { DecodedHttpResponse } from '../../local/rpc';
import { RouteTable } from '../../local/routes';
import { eventually, within } from '../support/eventually';

const ok = (text: string): DecodedHttpResponse => ({ status: 200, headers: {}, cookies: [], body: Buffer.from(text) });

/** A server whose `hold` function answers when the test says, `never` never, `quick` at once. */
async function serve(functionTimeoutMs?: number) {
  const routes = new RouteTable<RouteTarget>();
  for (const name of ['hold', 'never', 'quick']) routes.add(name, ['GET', 'POST'], { name });
  const throttle = new HttpThrottle({ maxConcurrentRequests: 1, maxOutstandingRequests: 10 });
  const invoked: string[] = [];
  const logs: string[] = [];
  const abandoned: AbortSignal[] = [];
  let answerHold: () => void = () => undefined;
  let markHeld: () => void = () => undefined;
  const held = new Promise<void>((resolve) => (markHeld = resolve));
  const server = await FunctionsHttpServer.listen({
    host: '127.0.0.1',
    port: 0,
    routePrefix: 'api',
    routes,
    maxBodyBytes: 1024,
    throttle,
    ...(functionTimeoutMs === undefined ? {} : { functionTimeoutMs }),
    log: (_level, message) => logs.push(message),
    invokeHttp: (fn, _request, signal) => {
      invoked.push(fn.name);
      abandoned.push(signal);
      if (fn.name === 'quick') return Promise.resolve(ok('quick'));
      if (fn.name === 'never') return new Promise(() => undefined);
      markHeld();
      return new Promise((resolve) => (answerHold = () => resolve(ok('held'))));
    },
  });
  return { server, throttle, invoked, logs, abandoned, held, answerHold: () => answerHold() };
}

let current: FunctionsHttpServer | undefined;
afterEach(async () => {
  await current?.close(1000);
  current = undefined;
});

/**
 * A raw client: sends `head` + `body` on a new socket (resolves once written); the test destroys it when it
 * wants the client gone.
 */
async function rawRequest(port: number, head: string, body = ''): Promise<net.Socket> {
  const socket = net.connect({ host: '127.0.0.1', port });
  socket.on('error', () => undefined);
  await within(new Promise((resolve) => socket.once('connect', resolve)), 'the raw client to connect', 10_000);
  await within(new Promise((resolve) => socket.write(head + body, resolve)), 'the raw request to be sent', 10_000);
  return socket;
}

const get = (path: string): string => `GET ${path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n`;

describe('a request whose client goes away never keeps an execution slot', () => {
  it('waiting for a slot: it leaves the queue and never reaches the function', async () => {
    const s = await serve();
    current = s.server;
    const first = fetch(`${s.server.url}/api/hold`);
    await within(s.held, 'the first request to hold the only slot', 10_000);
    const client = await rawRequest(s.server.port, get('/api/quick'));
    await eventually(
      async () => s.throttle.stats,
      (st) => st.waiting === 1,
      'the second request to wait',
      10_000,
    );
    client.destroy();
    await eventually(
      async () => s.throttle.stats,
      (st) => st.waiting === 0,
      'the gone request to leave',
      10_000,
    );
    s.answerHold();
    assert.equal((await within(first, 'the first answer', 10_000)).status, 200);
    const next = await within(fetch(`${s.server.url}/api/quick`), 'a later request to be served', 10_000);
    assert.equal(next.status, 200);
    assert.deepEqual(s.invoked, ['hold', 'quick'], 'the gone request never ran');
    assert.deepEqual(s.throttle.stats, { executing: 0, waiting: 0, rejected: 0 });
  });

  it('reading its body (executing): the read stops and the slot is given back', async () => {
    const s = await serve();
    current = s.server;
    const head = 'POST /api/quick HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: 100\r\n\r\n';
    const client = await rawRequest(s.server.port, head, 'x'.repeat(10));
    await eventually(
      async () => s.throttle.stats,
      (st) => st.executing === 1,
      'the request to take the slot',
      10_000,
    );
    client.destroy();
    await eventually(
      async () => s.throttle.stats,
      (st) => st.executing === 0,
      'the slot to come back',
      10_000,
    );
    const next = await within(fetch(`${s.server.url}/api/quick`), 'the next request to be served', 10_000);
    assert.equal(next.status, 200);
    assert.deepEqual(s.invoked, ['quick'], 'the cut-off request never reached the function');
  });

  it('executing its function: the slot is the invocation’s until it ends, then comes back; its answer is dropped', async () => {
    const s = await serve();
    current = s.server;
    const client = await rawRequest(s.server.port, get('/api/hold'));
    let answered = '';
    client.on('data', (d: Buffer) => (answered += d.toString()));
    await within(s.held, 'the function to start', 10_000);
    client.destroy();
    const waiting = fetch(`${s.server.url}/api/quick`);
    await eventually(
      async () => s.throttle.stats,
      (st) => st.waiting === 1,
      'the next request to wait',
      10_000,
    );
    assert.equal(s.throttle.stats.executing, 1, 'at most maxConcurrentRequests run on the app, gone client or not');
    s.answerHold();
    const next = await within(waiting, 'the next request to be served once the invocation ended', 10_000);
    assert.equal(next.status, 200);
    assert.equal(answered, '', 'nothing was written to the gone client');
    assert.deepEqual(s.throttle.stats, { executing: 0, waiting: 0, rejected: 0 });
    assert.deepEqual(
      s.logs.filter((l) => /Unhandled|failed/.test(l)),
      [],
      'a gone client is not an error',
    );
  });

  it('readBody rejects (never hangs) when the client went before the read began: the leak behind the wedge', async () => {
    let result: Promise<unknown> | undefined;
    let markRead: () => void = () => undefined;
    const read = new Promise<void>((resolve) => (markRead = resolve));
    const plain = http.createServer((req) => {
      // as a request that waited for a slot: the body is read only after its client has gone
      req.socket.once('close', () => {
        result = readBody(req, 1024);
        markRead();
      });
    });
    await new Promise<void>((resolve) => plain.listen(0, '127.0.0.1', resolve));
    try {
      const port = (plain.address() as AddressInfo).port;
      const head = 'POST /x HTTP/1.1\r\nHost: 127.0.0.1\r\ncontent-length: 4\r\n\r\n';
      const client = await rawRequest(port, head, 'body');
      client.destroy();
      await within(read, 'the server to see the client go', 10_000);
      await assert.rejects(within(result ?? Promise.resolve(), 'readBody to settle', 10_000), ClientGoneError);
    } finally {
      plain.closeAllConnections();
      await new Promise((resolve) => plain.close(resolve));
    }
  });
});

describe('host.json functionTimeout (injected: 100 ms)', () => {
  it('fails an invocation that never ends with 500, logs it as the host does, and gives its slot back', async () => {
    const s = await serve(100);
    current = s.server;
    const res = await within(fetch(`${s.server.url}/api/never`), 'the timed-out invocation to be answered', 10_000);
    assert.equal(res.status, 500);
    assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
    const problem = (await res.json()) as Record<string, unknown>;
    assert.equal(problem['status'], 500);
    assert.match(String(problem['detail']), /'never' ran past functionTimeout/);
    assert.ok(
      s.logs.some((l) => l.startsWith("Timeout value of 00:00:00.100 exceeded by function 'Functions.never'")),
      s.logs.join('\n'),
    );
    assert.equal(s.abandoned[0]?.aborted, true, 'the front forgets the call');
    const next = await within(fetch(`${s.server.url}/api/quick`), 'the next request on the freed slot', 10_000);
    assert.equal(next.status, 200);
    assert.deepEqual(s.throttle.stats, { executing: 0, waiting: 0, rejected: 0 });
  });
});
