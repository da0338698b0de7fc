import { spawn } from 'node:child_process';
import { within } from '../../support/eventually';

/**
 * Runs a compiled client script (`node <script> ...args`) in its own process, so that the load it makes
 * is not made by the process that serves it, and returns what it printed on its `RESULT <json>` line.
 * Fails (and kills the child) after `ms`, naming `what`; fails with the child's stderr if it exits without
 * a result.
 */
export function resultOfClient<T>(script: string, args: readonly string[], what: string, ms: number): Promise<T> {
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<T>((resolve, reject) => {
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || line === undefined)
        reject(new Error(`${what}: the client exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)) as T);
    });
  });
  return within(done, what, ms).finally(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
}

/** Prints `RESULT <json>` of `main()` for {@link resultOfClient}, or the error and exit code 1. */
export function runClient(name: string, main: () => Promise<unknown>): void {
  main().then(
    (result) => process.stdout.write(`RESULT ${JSON.stringify(result)}\n`),
    (e: unknown) => {
      process.stderr.write(`${name} failed: ${e instanceof Error ? e.stack : String(e)}\n`);
      process.exit(1);
    },
  );
}
