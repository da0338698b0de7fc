/**
 * `applicationinsights` must start before the modules it instruments load: every function module and the
 * local host's main import the telemetry preload first, and the preload starts Azure Monitor (patching
 * http) before ioredis or the Azure SDK are loaded.
 */
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import * as http from 'node:http';
import type { AddressInfo } from 'node:net';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { exitOf } from '../support/child-process';
import { functionModules } from '../support/local-host';

const DIST = path.resolve(__dirname, '../..');

/** The first module a compiled CommonJS file requires. */
async function firstRequire(file: string): Promise<string | undefined> {
  return /require\("([^"]+)"\)/.exec(await fs.readFile(file, 'utf8'))?.[1];
}

describe('telemetry preload', () => {
  it('is the first import of every function module, and follows only local.settings.json in main', async () => {
    const modules = await functionModules();
    assert.ok(modules.length >= 5);
    for (const m of modules) assert.equal(await firstRequire(m), '../lib/telemetry/preload', path.basename(m));
    const main = await fs.readFile(path.join(DIST, 'local/main.js'), 'utf8');
    const requires = [...main.matchAll(/require\("([^"]+)"\)/g)].map((x) => x[1]);
    assert.deepEqual(requires.slice(0, 2), ['./local-settings', '../lib/telemetry/preload']);
  });

  it('with a connection string, starts Azure Monitor before ioredis, the Azure SDK or http are loaded', () => {
    const script = `
      require(${JSON.stringify(path.join(DIST, 'lib/telemetry/preload.js'))});
      const loaded = Object.keys(require.cache);
      const has = (s) => loaded.some((k) => k.includes(s));
      const http = require('http');
      const api = require('@opentelemetry/api');
      console.log(JSON.stringify({
        ai: has('/node_modules/applicationinsights/'),
        ioredis: has('/node_modules/ioredis/'),
        serviceBus: has('/node_modules/@azure/service-bus/'),
        storage: has('/node_modules/@azure/storage-blob/'),
        httpPatched: http.request.__wrapped === true,
        // no auto-instrumentation duplicates the context lookup's own spans: the distro's Redis instrumentation
        // does not patch ioredis 6 (telemetry as deployed, docs/operations.md)
        ioredisPatched: (() => { const R = require('ioredis'); return (R.default ?? R).prototype.sendCommand.__wrapped === true; })(),
        provider: api.trace.getTracerProvider().getDelegate().constructor.name !== 'NoopTracerProvider',
      }));
      process.exit(0);`;
    const r = spawnSync(process.execPath, ['-e', script], {
      env: {
        ...process.env,
        APPLICATIONINSIGHTS_CONNECTION_STRING:
          'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/',
        OTEL_TRACES_EXPORTER: 'none',
      },
      encoding: 'utf8',
      timeout: 60_000,
    });
    assert.equal(r.status, 0, r.stderr);
    const line = r.stdout.trim().split('\n').pop() ?? '';
    assert.deepEqual(JSON.parse(line), {
      ai: true,
      ioredis: false,
      serviceBus: false,
      storage: false,
      httpPatched: true,
      ioredisPatched: false,
      provider: true,
    });
  });

  it('without settings, leaves tracing off: no provider, spans do not record', () => {
    const script = `
      require(${JSON.stringify(path.join(DIST, 'lib/telemetry/preload.js'))});
      const api = require('@opentelemetry/api');
      console.log(JSON.stringify({
        ai: Object.keys(require.cache).some((k) => k.includes('/node_modules/applicationinsights/')),
        recording: api.trace.getTracer('probe').startSpan('probe').isRecording(),
        enabled: require(${JSON.stringify(path.join(DIST, 'lib/telemetry/tracing.js'))}).tracingState().enabled,
      }));`;
    const env = { ...process.env };
    delete env['APPLICATIONINSIGHTS_CONNECTION_STRING'];
    delete env['OTEL_TRACES_EXPORTER'];
    const r = spawnSync(process.execPath, ['-e', script], { env, encoding: 'utf8', timeout: 60_000 });
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout.trim()), { ai: false, recording: false, enabled: false });
  });

  it('OTEL_TRACES_EXPORTER=otlp sends spans to OTEL_EXPORTER_OTLP_ENDPOINT/v1/traces', async () => {
    const received: { path: string; body: string }[] = [];
    const collector = http.createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (c: Buffer) => chunks.push(c));
      req.on('end', () => {
        received.push({ path: req.url ?? '', body: Buffer.concat(chunks).toString('utf8') });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end('{}');
      });
    });
    collector.listen(0, '127.0.0.1');
    await once(collector, 'listening');
    try {
      const port = (collector.address() as AddressInfo).port;
      const script = `
        require(${JSON.stringify(path.join(DIST, 'lib/telemetry/preload.js'))});
        const t = require(${JSON.stringify(path.join(DIST, 'lib/telemetry/tracing.js'))});
        t.stageTracer().span('validate', { probe: 'otlp-probe-span' }, async () => 1)
          .then(() => t.tracingState().shutdown())
          .then(() => process.exit(0), (e) => { console.error(e); process.exit(1); });`;
      const child = spawn(process.execPath, ['-e', script], {
        env: {
          ...process.env,
          APPLICATIONINSIGHTS_CONNECTION_STRING: '',
          OTEL_TRACES_EXPORTER: 'otlp',
          OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
        },
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let err = '';
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      const code = await exitOf(child, 'the OTLP probe process to export its span and exit');
      assert.equal(code, 0, err);
      assert.equal(received.length, 1, JSON.stringify(received.map((r) => r.path)));
      assert.equal(received[0]?.path, '/v1/traces');
      assert.ok(received[0]?.body.includes('otlp-probe-span'), 'the span reached the collector');
    } finally {
      collector.close();
    }
  });
});

describe('invocation root inside the Functions worker, with Application Insights', () => {
  it("registers its hook before applicationinsights' own, so stage spans stay children of the root", async () => {
    // As in the worker: @azure/functions-core exists before the function modules (and so the preload) load.
    const script = `
      const { LocalHost } = require(${JSON.stringify(path.join(DIST, 'local/host.js'))});
      const dir = ${JSON.stringify(path.join(DIST, 'functions'))};
      const mods = require('fs').readdirSync(dir).filter((f) => f.endsWith('.js')).map((f) => require('path').join(dir, f));
      (async () => {
        const host = await LocalHost.create({ port: 0, appModules: mods, log: () => {} });
        const res = await fetch(host.url + '/api/score', {
          method: 'POST',
          headers: { 'content-type': 'application/json', 'x-deadline-ms': '2000',
            traceparent: '00-5bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01' },
          body: JSON.stringify(${JSON.stringify(validEventJson())}),
        });
        process.stderr.write('status ' + res.status + '\\n');
        const flush = require(${JSON.stringify(path.join(DIST, 'lib/telemetry/tracing.js'))}).tracingState().flush();
        await Promise.race([flush, new Promise((r) => setTimeout(r, 5000))]); // console spans are flushed first
        process.exit(0);
      })().catch((e) => { console.error(e); process.exit(1); });`;
    const child = spawn(process.execPath, ['-e', script], {
      env: {
        ...process.env,
        APPLICATIONINSIGHTS_CONNECTION_STRING:
          'InstrumentationKey=00000000-0000-0000-0000-000000000000;IngestionEndpoint=http://127.0.0.1:9/',
        OTEL_TRACES_EXPORTER: 'console',
        OTEL_TRACES_SAMPLER: 'always_on',
        MODEL_DIR: '',
        REDIS_URL: '',
      },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    const code = await exitOf(child, 'the local-host process to score one request, flush its spans and exit');
    assert.equal(code, 0, err);
    assert.match(err, /status 200/);
    const spans = out
      .split('\n')
      .filter((l) => l.startsWith('{"traceId":"5bf92f3577b34da6a3ce929d0e0e4736"'))
      .map((l) => JSON.parse(l) as Record<string, unknown>);
    const root = spans.find((s) => s['name'] === 'POST /api/score');
    assert.equal(root?.['parentSpanId'], '00f067aa0ba902b7', out.slice(0, 3000));
    for (const name of ['validate', 'context', 'inference.queue', 'inference.run'])
      assert.equal(spans.find((s) => s['name'] === name)?.['parentSpanId'], root?.['spanId'], name);
  });
});

function validEventJson(): Record<string, unknown> {
  return {
    transactionId: 'tx-ai-1',
    userId: 'user-1',
    amount: 10,
    currency: 'EUR',
    merchantId: 'm-1',
    merchantCategory: '5411',
    country: 'FR',
    channel: 'web',
    timestamp: '2026-11-30T10:15:00+01:00',
  };
}
