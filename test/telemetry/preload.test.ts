/**
 * `applicationinsights` must start before the modules it instruments load: every function module and the
 * local host's main import the telemetry preload first, and the preload starts Azure Monitor (patching
 * http) before ioredis or the Azure SDK are loaded.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { functionModules } from '../support/host';

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
      const tracer = api.trace.getTracer('probe');
      const span = tracer.startSpan('probe');
      console.log(JSON.stringify({
        ai: has('/node_modules/applicationinsights/'),
        ioredis: has('/node_modules/ioredis/'),
        serviceBus: has('/node_modules/@azure/service-bus/'),
        storage: has('/node_modules/@azure/storage-blob/'),
        httpPatched: http.request.__wrapped === true,
        recording: span.isRecording(),
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
      recording: true,
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
});
