import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { validEvent } from '../support/events';
import { within } from '../support/eventually';

const MAIN = path.resolve(__dirname, '../../local/main.js');

describe('npm start (local/main.js)', () => {
  it('serves the app on embedded defaults, logs model and URL, and stops gracefully on SIGTERM', async () => {
    const env: NodeJS.ProcessEnv = { ...process.env, PORT: '0' };
    delete env['REDIS_URL'];
    delete env['MODEL_DIR'];
    const child = spawn(process.execPath, [MAIN], { env, stdio: ['ignore', 'pipe', 'pipe'] });
    let out = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (out += d.toString()));
    // event-driven: checked on each chunk of output, bounded, failing with what was printed
    const listening = new Promise<string>((resolve, reject) => {
      const check = (): void => {
        const m = /Listening on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out);
        if (m?.[1] !== undefined) resolve(m[1]);
      };
      child.stdout.on('data', check);
      child.stderr.on('data', check);
      child.once('exit', (code) => reject(new Error(`exited early (${code}): ${out}`)));
    });
    const url = await within(listening, 'the "Listening on" line', 60_000).catch((err: Error) => {
      child.kill('SIGKILL');
      throw new Error(`${err.message}; output so far:\n${out}`);
    });
    assert.match(out, /"msg":"model loaded","model":"fraud"/);
    const ready = await fetch(`${url}/health/ready`);
    assert.equal(ready.status, 200);
    const res = await fetch(`${url}/score`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify(validEvent()),
    });
    assert.equal(res.status, 200);
    assert.ok(!out.includes('user-42'), 'payment data never reaches logs');
    child.kill('SIGTERM');
    const [code] = (await within(once(child, 'exit'), 'exit after SIGTERM', 30_000)) as [number | null];
    assert.equal(code, 0);
    assert.match(out, /SIGTERM: shutting down gracefully/);
    assert.ok(!out.includes("Executing 'Functions."), 'no per-invocation lines unless verbose');
  });
});
