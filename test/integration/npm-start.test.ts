import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { startLocalHost } from '../support/local-host';

describe('npm start (local/main.js)', () => {
  it('serves the app on embedded defaults, logs model and URL, and stops gracefully on SIGTERM', async () => {
    const { child, url, output } = await startLocalHost();
    try {
      assert.match(output(), /"msg":"model loaded","model":"fraud"/);
      const ready = await fetch(`${url}/health/ready`);
      assert.equal(ready.status, 200);
      const res = await fetch(`${url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(validEvent()),
      });
      assert.equal(res.status, 200);
      assert.ok(!output().includes('user-42'), 'payment data never reaches logs');
    } catch (err) {
      child.kill('SIGKILL'); // a failed assertion must not leave the server running (the test would never end)
      throw err;
    }
    const code = await stopChild(child, 'npm start to exit after SIGTERM');
    assert.equal(code, 0);
    assert.match(output(), /SIGTERM: shutting down gracefully/);
    assert.ok(!output().includes("Executing 'Functions."), 'no per-invocation lines unless verbose');
  });

  it('OTEL_TRACES_EXPORTER=console prints the JSON spans of a request sent with a traceparent', async () => {
    const { child, url, output } = await startLocalHost({
      set: { OTEL_TRACES_EXPORTER: 'console' },
      unset: ['APPLICATIONINSIGHTS_CONNECTION_STRING'],
    });
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      const res = await fetch(`${url}/score`, {
        method: 'POST',
        headers: {
          'content-type': 'application/json',
          traceparent: `00-${traceId}-00f067aa0ba902b7-01`,
          'x-deadline-ms': '2000',
        },
        body: JSON.stringify(validEvent({ note: 'note-never-printed' })),
      });
      assert.equal(res.status, 200);
      const spans = await poll(
        () => {
          const lines = output()
            .split('\n')
            .filter((l) => l.startsWith('{"traceId"'))
            .map((l) => JSON.parse(l) as Record<string, unknown>)
            .filter((s) => s['traceId'] === traceId);
          return lines.some((s) => s['name'] === 'POST /api/score') ? lines : undefined;
        },
        'the JSON spans of the trace',
        output,
      );
      const root = spans.find((s) => s['name'] === 'POST /api/score');
      assert.equal(root?.['parentSpanId'], '00f067aa0ba902b7');
      assert.equal(root?.['kind'], 'SERVER');
      for (const name of ['validate', 'context', 'inference.queue', 'inference.run'])
        assert.ok(
          spans.some((s) => s['name'] === name && s['parentSpanId'] === root?.['spanId']),
          `${name} under the root`,
        );
      for (const s of spans)
        for (const key of ['spanId', 'startTime', 'durationMs', 'attributes', 'status']) assert.ok(key in s, key);
      assert.ok(!output().includes('note-never-printed') && !output().includes('user-42'), 'no payment data printed');
    } finally {
      await stopChild(child, 'npm start to exit after SIGTERM');
    }
  });
});

/** Polls `probe` every 20 ms until it returns a value, for at most 30 s; fails with `what` and the output. */
async function poll<T>(probe: () => T | undefined, what: string, output: () => string): Promise<T> {
  const end = Date.now() + 30_000;
  for (;;) {
    const v = probe();
    if (v !== undefined) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${output().slice(-2000)}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}
