/**
 * host.json `minMessageBatchSize` and `maxBatchWaitTime` as the Service Bus extension applies them to a batch trigger:
 * the call waits for the minimum, at most the wait time after its first message, then takes a partial batch. Read
 * from host.json (`hostJsonServiceBus`), applied by the embedded bus. Own process: the library caches its runtime.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { InProcessBus } from '../../local/in-process-bus';
import { LocalHost } from '../../local/host';
import { hostJsonServiceBus } from '../../local/host-json';
import { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { eventually } from '../support/eventually';

const dirs: string[] = [];
after(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));

function hostJson(serviceBus: Record<string, unknown>): string {
  const d = mkdtempSync(path.join(tmpdir(), 'test-host-json-'));
  dirs.push(d);
  writeFileSync(path.join(d, 'host.json'), JSON.stringify({ version: '2.0', extensions: { serviceBus } }));
  return d;
}

let host: LocalHost | undefined;
after(async () => {
  await host?.dispose();
});

/** Runs `run` with an embedded bus of these options feeding the fixture's batch trigger (one host for the file). */
async function withBatchHost(
  options: { minMessageBatchSize: number; maxBatchWaitMs: number },
  run: (bus: InProcessBus, calls: number[]) => Promise<void>,
): Promise<void> {
  host ??= await LocalHost.create({
    port: 0,
    appModules: [path.join(__dirname, 'fixtures', 'batch-app.js')],
    log: () => undefined,
  });
  const fixture = await import('./fixtures/batch-app');
  fixture.calls.length = 0;
  const bus = new InProcessBus();
  const sb = new ServiceBusEmulator({ bus, maxMessageBatchSize: 100, ...options });
  sb.start(host);
  try {
    await run(bus, fixture.calls);
  } finally {
    await sb.stop();
  }
}

const send = (bus: InProcessBus, n: number, from: number): void => {
  for (let i = 0; i < n; i++) bus.send('batch-wait', { messageId: `m${from + i}`, body: { i: from + i } });
};

describe('host.json minMessageBatchSize and maxBatchWaitTime', () => {
  it('reads them from host.json, with the extension defaults when absent', () => {
    const set = hostJsonServiceBus(hostJson({ minMessageBatchSize: 64, maxBatchWaitTime: '00:00:00.500' }));
    assert.equal(set.minMessageBatchSize, 64);
    assert.equal(set.maxBatchWaitMs, 500);
    const defaults = hostJsonServiceBus(hostJson({}));
    assert.equal(defaults.minMessageBatchSize, 1);
    assert.equal(defaults.maxBatchWaitMs, 30_000);
    assert.throws(() => hostJsonServiceBus(hostJson({ maxBatchWaitTime: 'soon' })), /maxBatchWaitTime/);
  });

  it('waits for the minimum: messages that arrive in two parts are one call', async () => {
    // a wait far longer than the test: only waiting for the second part can make one call of 6
    await withBatchHost({ minMessageBatchSize: 6, maxBatchWaitMs: 120_000 }, async (bus, calls) => {
      send(bus, 3, 0);
      await new Promise((r) => setTimeout(r, 100));
      assert.deepEqual(calls, [], 'no call before the minimum (its wait is 2 minutes)');
      send(bus, 3, 3);
      await eventually(
        () => Promise.resolve([...calls]),
        (c) => c.length > 0,
        'the batch trigger to be called once the minimum arrived',
        10_000,
      );
      assert.deepEqual(calls, [6]);
    });
  });

  it('takes a partial batch once the wait time has passed', async () => {
    await withBatchHost({ minMessageBatchSize: 50, maxBatchWaitMs: 200 }, async (bus, calls) => {
      send(bus, 2, 0);
      await eventually(
        () => Promise.resolve([...calls]),
        (c) => c.reduce((a, b) => a + b, 0) === 2,
        'the partial batch after maxBatchWaitTime',
        10_000,
      );
      assert.deepEqual(calls, [2]);
    });
  });
});
