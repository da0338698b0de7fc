import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { once } from 'node:events';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { validEvent } from '../support/events';

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
    const url = await new Promise<string>((resolve, reject) => {
      const timer = setInterval(() => {
        const m = /Listening on (http:\/\/127\.0\.0\.1:\d+\/api)/.exec(out);
        if (m?.[1] !== undefined) {
          clearInterval(timer);
          resolve(m[1]);
        }
      }, 20);
      child.once('exit', (code) => {
        clearInterval(timer);
        reject(new Error(`exited early (${code}): ${out}`));
      });
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
    const [code] = (await once(child, 'exit')) as [number | null];
    assert.equal(code, 0);
    assert.match(out, /SIGTERM: shutting down gracefully/);
  });
});
