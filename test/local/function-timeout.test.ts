/**
 * host.json `functionTimeout` (`local/function-timeout.ts`), read by the local host (`local/host-json.ts`) and
 * enforced as the Functions host enforces it: an invocation still running then is failed and whatever it held
 * is given back. Through a real LocalHost (its HTTP front thread, real sockets) with an injected short timeout
 * and functions that never end. Own process: the library caches its runtime lookup per process.
 */
import assert from 'node:assert/strict';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import {
  FunctionTimeoutError,
  formatTimeSpan,
  parseFunctionTimeout,
  withFunctionTimeout,
} from '../../local/function-timeout';
import { LocalHost } from '../../local/host';
import { hostJsonFunctionTimeout } from '../../local/host-json';
import { within } from '../support/eventually';

const ROOT = path.resolve(__dirname, '../../..');

describe('functionTimeout as host.json writes it', () => {
  it('parses a .NET time span (and -1, unbounded) and refuses anything else, naming the setting', () => {
    assert.equal(parseFunctionTimeout('00:05:00'), 300_000);
    assert.equal(parseFunctionTimeout('01:00:00'), 3_600_000);
    assert.equal(parseFunctionTimeout('1.02:03:04.5'), (((24 + 2) * 60 + 3) * 60 + 4) * 1000 + 500);
    assert.equal(parseFunctionTimeout(-1), Number.POSITIVE_INFINITY);
    assert.equal(parseFunctionTimeout('-1'), Number.POSITIVE_INFINITY);
    for (const bad of ['5m', '00:60:00', '00:00:00', '', 300])
      assert.throws(() => parseFunctionTimeout(bad), /functionTimeout/);
    assert.equal(formatTimeSpan(300_000), '00:05:00');
    assert.equal(formatTimeSpan(1_500), '00:00:01.500');
  });

  it('is read from the app’s host.json (00:05:00)', () => {
    assert.equal(hostJsonFunctionTimeout(ROOT), 300_000);
  });

  it('withFunctionTimeout fails a promise that never settles, and leaves one that does alone', async () => {
    await assert.rejects(
      within(withFunctionTimeout(new Promise(() => undefined), 'f', 20), 'the timeout', 10_000),
      (err: unknown) => err instanceof FunctionTimeoutError && err.functionName === 'f' && err.timeoutMs === 20,
    );
    assert.equal(await withFunctionTimeout(Promise.resolve(7), 'f', 20), 7);
    assert.equal(await withFunctionTimeout(Promise.resolve(8), 'f', Number.POSITIVE_INFINITY), 8);
  });
});

describe('a LocalHost with functionTimeout 200 ms (injected) and functions that never end', () => {
  let host: LocalHost;
  const logs: string[] = [];

  before(async () => {
    host = await LocalHost.create({
      port: 0,
      appModules: [path.join(__dirname, 'fixtures', 'hang-app.js')],
      log: (line) => logs.push(line),
      functionTimeoutMs: 200,
      throttles: { maxConcurrentRequests: 1 },
      shutdownTimeoutMs: 1000,
    });
  });
  after(() => host.dispose());

  it('HTTP: 500 from the host, logged as the host logs it, and the only slot is free again', async () => {
    const res = await within(fetch(`${host.url}/api/hang`), 'the hung invocation to be failed', 10_000);
    assert.equal(res.status, 500);
    assert.match(String(((await res.json()) as Record<string, unknown>)['detail']), /functionTimeout/);
    assert.ok(
      logs.some((l) => l.includes("Timeout value of 00:00:00.200 exceeded by function 'Functions.hang'")),
      logs.join('\n'),
    );
    const next = await within(fetch(`${host.url}/api/quick`), 'the next request on the freed slot', 10_000);
    assert.equal(next.status, 200);
    assert.equal(await next.text(), 'quick');
  });

  it('other triggers: the invocation rejects with FunctionTimeoutError (the bus then abandons the message)', async () => {
    await assert.rejects(
      within(host.invoke('hangQueue', { a: 1 }, { MessageId: 'm1', DeliveryCount: 1 }), 'the timeout', 10_000),
      FunctionTimeoutError,
    );
    assert.ok(
      logs.some((l) => l.includes("exceeded by function 'Functions.hangQueue'")),
      logs.join('\n'),
    );
  });
});
