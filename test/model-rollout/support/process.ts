import { spawn } from 'node:child_process';
import * as path from 'node:path';

/** A child app instance. */
export interface ChildInstance {
  readonly url: string;
  stop(): Promise<void>;
}

/** Starts `support/instance.js` with `env` added and waits (at most 60 s) for its `LISTENING` line. */
export function startInstance(env: Record<string, string>): Promise<ChildInstance> {
  const child = spawn(process.execPath, [path.join(__dirname, 'instance.js')], {
    env: { ...process.env, ...env, ROLLOUT_TEST_INSTANCE: '1' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stderr.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => fail(new Error(`instance did not start: ${err}`)), 60_000);
    const fail = (e: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    child.once('exit', (code) => fail(new Error(`instance exited (${code}): ${err}`)));
    child.stdout.on('data', (d: Buffer) => {
      out += d.toString();
      const m = /LISTENING (\d+)/.exec(out);
      if (m === null) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout.removeAllListeners('data');
      child.stdout.resume();
      resolve({
        url: `http://127.0.0.1:${m[1]}`,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null) return done();
            const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => (clearTimeout(kill), done()));
            child.kill('SIGTERM');
          }),
      });
    });
  });
}
