/**
 * LocalHost end-to-end tests: a fixture app registered through the real `@azure/functions`
 * library, served over real HTTP. This file must stay in its own process (node --test does
 * that per file) because the library caches its runtime lookup per process.
 */
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as http from 'node:http';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalHost } from '../../local/host';
import { resolveAppSettings } from '../../local/invoke';
import { RouteTable, RouteTemplateError, matchRouteTemplate, parseRouteTemplate } from '../../local/routes';
import { within } from '../support/eventually';

let host: LocalHost;
let fixture: typeof import('./fixtures/app');
const logs: string[] = [];
const api = (p: string): string => `${host.url}/api/${p}`;

async function problem(res: Response, status: number): Promise<Record<string, unknown>> {
  assert.equal(res.status, status);
  assert.match(res.headers.get('content-type') ?? '', /^application\/problem\+json/);
  const body = (await res.json()) as Record<string, unknown>;
  assert.equal(body['status'], status);
  return body;
}

before(async () => {
  process.env['SCORING_QUEUE'] = 'scoring-requests';
  host = await LocalHost.create({
    port: 0,
    appModules: [path.join(__dirname, 'fixtures', 'app.js')],
    log: (line) => logs.push(line),
    extraRoutes: (req, res) => {
      if (req.url !== '/local/ping') return false;
      res.end('pong');
      return true;
    },
  });
  // Already loaded (and registered) by LocalHost.create; this just gets the same instance.
  fixture = await import('./fixtures/app');
});

after(() => host.dispose());

describe('registration through the real @azure/functions', () => {
  it('lists functions with the metadata the library generated', () => {
    const byName = new Map(host.functions.map((f) => [f.name, f]));
    assert.deepEqual([...byName.keys()].sort(), [
      'boom',
      'bytes',
      'createThing',
      'defaultRoute',
      'echo',
      'nothing',
      'scoreQueue',
      'slow',
      'wrapped',
    ]);
    const echo = byName.get('echo');
    assert.ok(echo);
    assert.equal(echo.triggerType, 'httpTrigger');
    assert.match(echo.triggerName, /^httpTrigger[0-9a-f]{10}$/);
    assert.equal(echo.route, 'echo/{name}/{id:int?}');
    assert.deepEqual(echo.methods, ['GET']);
    assert.equal(echo.trigger['authLevel'], 'function');
    assert.equal(echo.trigger.direction, 'in');
    assert.deepEqual(echo.metadata.bindings['$return'], {
      type: 'http',
      name: echo.metadata.bindings['$return']?.['name'],
      direction: 'out',
    });
    assert.deepEqual(byName.get('defaultRoute')?.methods, ['GET', 'POST']);
    assert.equal(byName.get('defaultRoute')?.route, 'defaultRoute');
    assert.deepEqual(byName.get('createThing')?.methods, ['POST']);

    const sb = byName.get('scoreQueue');
    assert.ok(sb);
    assert.equal(sb.triggerType, 'serviceBusTrigger');
    assert.equal(sb.trigger['queueName'], '%SCORING_QUEUE%');
    assert.equal(sb.trigger['connection'], 'ServiceBusConnection');
    assert.equal(resolveAppSettings(String(sb.trigger['queueName'])), 'scoring-requests');
    const outName = fixture.scoresTopic.name;
    assert.match(outName, /^serviceBusOutput[0-9a-f]{10}$/);
    assert.deepEqual(sb.metadata.bindings[outName], {
      connection: 'ServiceBusConnection',
      topicName: 'scores',
      type: 'serviceBus',
      name: outName,
      direction: 'out',
    });
  });

  it('awaited appStart hooks before serving, with the worker context shape', async () => {
    assert.equal(fixture.state.appStarted, true);
    const res = await fetch(api('echo/alice'));
    assert.equal(((await res.json()) as { appStarted: boolean }).appStarted, true);
  });
});

describe('http triggers over real HTTP', () => {
  it('round-trips route params, query, headers, cookies', async () => {
    const res = await fetch(api('echo/alice/42?q=1&tag=a&tag=b'), { headers: { 'x-test': 'hello' } });
    assert.equal(res.status, 200);
    assert.equal(res.headers.get('x-echo'), 'yes');
    assert.match(res.headers.get('content-type') ?? '', /^application\/json/);
    const cookie = res.headers.getSetCookie()[0] ?? '';
    assert.match(cookie, /^sid=abc/);
    assert.match(cookie, /HttpOnly/);
    assert.match(cookie, /SameSite=Lax/);
    const body = (await res.json()) as Record<string, unknown>;
    assert.equal(body['name'], 'alice');
    assert.equal(body['id'], '42');
    assert.equal(body['q'], '1');
    assert.deepEqual(body['tags'], ['a,b']); // the host sends one comma-joined value per key
    assert.equal(body['header'], 'hello');
    assert.equal(body['method'], 'GET');
    assert.equal(body['url'], api('echo/alice/42?q=1&tag=a&tag=b'));
    assert.equal(body['functionName'], 'echo');
    assert.match(String(body['invocationId']), /^[0-9a-f-]{36}$/);
    assert.equal(body['triggerMetadata'], null); // library drops triggerMetadata for http
    assert.ok(
      logs.some((l) => l.includes('echo: echo alice')),
      'user log forwarded',
    );
  });

  it('handles optional params, decoding, case-insensitive literals and constraints', async () => {
    assert.equal(((await (await fetch(api('echo/bob'))).json()) as { id: unknown }).id, null);
    assert.equal(((await (await fetch(api('ECHO/hello%20world/'))).json()) as { name: string }).name, 'hello world');
    await problem(await fetch(api('echo/bob/notanint')), 404);
  });

  it('runs log hooks over user logs, like the worker', async () => {
    assert.equal((await fetch(api('echo/SECRET'))).status, 200);
    assert.ok(logs.some((l) => l.includes('echo: echo ***')));
    assert.ok(!logs.some((l) => l.includes('echo SECRET')));
  });

  it('passes JSON and binary bodies through request.json()/arrayBuffer()', async () => {
    const payload = { features: [1, 2.5, -3], nested: { ok: true } };
    const res = await fetch(api('things'), { method: 'POST', body: JSON.stringify(payload) });
    assert.equal(res.status, 201);
    assert.deepEqual(await res.json(), { received: payload });

    const bytes = randomBytes(4096);
    const bin = await fetch(api('bytes'), { method: 'POST', body: bytes });
    assert.equal(bin.headers.get('content-type'), 'application/octet-stream');
    assert.deepEqual(Buffer.from(await bin.arrayBuffer()), bytes);

    const text = await fetch(api('defaultRoute'), { method: 'POST', body: 'there' });
    assert.equal(await text.text(), 'hi there');
    assert.equal((await fetch(api('things/5'), { method: 'DELETE' })).status, 204);
  });

  it('answers 404 and 405 with problem+json', async () => {
    const nf = await problem(await fetch(api('nope')), 404);
    assert.equal(nf['title'], 'Not Found');
    await problem(await fetch(`${host.url}/nope`), 404);
    const na = await fetch(api('echo/alice'), { method: 'DELETE' });
    await problem(na, 405);
    assert.equal(na.headers.get('allow'), 'GET');
    const put = await fetch(api('things'), { method: 'PUT' });
    await problem(put, 405);
    assert.equal(put.headers.get('allow'), 'POST');
  });

  it('turns a thrown handler error into 500 problem+json without leaking details', async () => {
    const res = await fetch(api('boom'));
    const text = JSON.stringify(await problem(res, 500));
    assert.doesNotMatch(text, /kaboom|secret-detail|\bat /);
    assert.ok(
      logs.some((l) => l.includes('kaboom')),
      'error logged server-side',
    );
    assert.ok(fixture.state.postInvocationErrors.includes('boom'), 'postInvocation saw the error');
  });

  it('lets preInvocation hooks replace the handler', async () => {
    const res = await fetch(api('wrapped'));
    assert.deepEqual(await res.json(), { wrapped: true, sawHookData: true });
    assert.ok(fixture.state.preInvocationCalls > 0);
  });

  it('serves extra routes, rejects oversized bodies, keeps connections alive', async () => {
    assert.equal(await (await fetch(`${host.url}/local/ping`)).text(), 'pong');

    const status413 = await new Promise<number>((resolve, reject) => {
      const req = http.request(api('things'), { method: 'POST', headers: { 'content-length': 9 * 1024 * 1024 } });
      req.on('response', (res) => {
        res.resume();
        resolve(res.statusCode ?? 0);
        req.destroy();
      });
      req.on('error', reject);
      req.flushHeaders();
    });
    assert.equal(status413, 413);

    const agent = new http.Agent({ keepAlive: true, maxSockets: 1 });
    const get = (): Promise<boolean> =>
      new Promise((resolve, reject) => {
        const req = http.get(api('echo/ka'), { agent }, (res) => {
          res.resume();
          res.on('end', () => resolve(req.reusedSocket));
        });
        req.on('error', reject);
      });
    assert.equal(await get(), false);
    assert.equal(await get(), true);
    agent.destroy();
  });
});

describe('generic invoke (non-http triggers)', () => {
  it('passes trigger value + camel-cased triggerMetadata and returns outputs', async () => {
    const result = await host.invoke(
      'scoreQueue',
      { id: 'req-1', features: [1, 2] },
      { MessageId: 'msg-1', DeliveryCount: 3, ApplicationProperties: { tenant: 't1' } },
    );
    const seen = fixture.state.queueMessages.at(-1);
    assert.ok(seen);
    assert.deepEqual(seen.message, { id: 'req-1', features: [1, 2] });
    assert.equal(seen.triggerMetadata?.['deliveryCount'], 3);
    assert.equal(seen.triggerMetadata?.['messageId'], 'msg-1');
    assert.deepEqual(seen.triggerMetadata?.['applicationProperties'], { tenant: 't1' });
    assert.equal((seen.triggerMetadata?.['sys'] as { methodName: string }).methodName, 'scoreQueue');
    assert.deepEqual(result.outputData[fixture.scoresTopic.name], [{ scored: 'req-1', score: 0.5 }]);
    assert.deepEqual(result.returnValue, { ok: true });
  });

  it('prints per-invocation host lines only when asked (invocationLog), with the outcome', async () => {
    const executing = (id: string): string[] =>
      logs.filter((l) => /Execut(ing|ed) 'Functions\.scoreQueue'/.test(l) && l.includes(id));
    await host.invoke('scoreQueue', { id: 'quiet' }, { DeliveryCount: 1 }, { invocationId: 'inv-quiet' });
    await fetch(api('echo/alice'));
    assert.deepEqual(executing('inv-quiet'), [], 'no Executing/Executed lines by default');
    assert.ok(!logs.some((l) => l.includes("Executing 'Functions.echo")), 'none for http requests either');
    await host.invoke(
      'scoreQueue',
      { id: 'loud' },
      { DeliveryCount: 1 },
      { invocationId: 'inv-loud', invocationLog: true },
    );
    await assert.rejects(
      host.invoke(
        'scoreQueue',
        { id: 'x', fail: true },
        { DeliveryCount: 1 },
        { invocationId: 'inv-fail', invocationLog: true },
      ),
    );
    const loud = executing('inv-loud');
    assert.equal(loud.length, 2);
    assert.match(loud[0] ?? '', /\[information\] scoreQueue: Executing 'Functions\.scoreQueue' \(Id=inv-loud\)/);
    assert.match(loud[1] ?? '', /Executed 'Functions\.scoreQueue' \(Succeeded, Id=inv-loud, Duration=\d+ms\)/);
    assert.match(executing('inv-fail')[1] ?? '', /\[error\].*\(Failed, Id=inv-fail/);
  });

  it('rejects with the handler error', async () => {
    await assert.rejects(host.invoke('scoreQueue', { id: 'x', fail: true }, { DeliveryCount: 1 }), /poison message/);
    assert.ok(fixture.state.postInvocationErrors.includes('scoreQueue'));
    await assert.rejects(host.invoke('missing', {}), /Unknown function/);
  });
});

describe('route templates', () => {
  it('parses and matches params, constraints, defaults, catch-all, complex segments', () => {
    const m = (t: string, p: string): Record<string, string> | undefined =>
      matchRouteTemplate(parseRouteTemplate(t), p.split('/').filter(Boolean));
    assert.deepEqual(m('models/{name}/promote', 'models/fraud-v2/promote'), { name: 'fraud-v2' });
    assert.equal(m('items/{id:int}', 'items/abc'), undefined);
    assert.equal(m('items/{id:int:range(1,10)}', 'items/11'), undefined);
    assert.deepEqual(m('items/{id:int:range(1,10)}', 'items/7'), { id: '7' });
    assert.deepEqual(m('c/{code:regex(^[a-z]{{3}}$)}', 'c/abc'), { code: 'abc' });
    assert.equal(m('c/{code:regex(^[a-z]{{3}}$)}', 'c/abcd'), undefined);
    assert.deepEqual(m('docs/{lang=en}', 'docs'), { lang: 'en' });
    assert.deepEqual(m('files/{*path}', 'files/a/b/c'), { path: 'a/b/c' });
    assert.deepEqual(m('files/{*path}', 'files'), {});
    assert.deepEqual(m('dl/{name}.{ext}', 'dl/report.pdf'), { name: 'report', ext: 'pdf' });
    assert.equal(m('a/b', 'a/b/c'), undefined);
    assert.throws(() => parseRouteTemplate('x/{id:nosuch}'), RouteTemplateError);
    assert.throws(() => parseRouteTemplate('x/{id'), RouteTemplateError);
  });

  it('prefers literal segments over parameters regardless of registration order', () => {
    const table = new RouteTable<string>();
    table.add('score/{id}', ['POST'], 'byId');
    table.add('score/batch', ['POST'], 'batch');
    const hit = table.match('post', ['score', 'batch']);
    assert.equal(hit.kind === 'match' && hit.target, 'batch');
    const byId = table.match('POST', ['score', '7']);
    assert.deepEqual(byId.kind === 'match' && byId.params, { id: '7' });
    assert.deepEqual(table.match('GET', ['score', '7']), { kind: 'method-not-allowed', allow: ['POST'] });
  });
});

describe('shutdown', () => {
  it('dispose() drains in-flight requests, runs appTerminate and closes the port', async () => {
    const slow = fetch(api('slow'));
    await within(fixture.slowStarted, 'the slow function to start', 10_000); // request is now in flight
    const disposing = host.dispose();
    const res = await slow;
    assert.equal(res.status, 200);
    assert.deepEqual(await res.json(), { slow: true });
    await disposing;
    assert.equal(fixture.state.terminated, true);
    assert.equal(fixture.state.terminateSawHookData, 'fixture'); // hookData shared appStart -> appTerminate
    await assert.rejects(fetch(api('echo/alice')));
    await assert.rejects(host.invoke('scoreQueue', {}), /disposed/);
  });
});
