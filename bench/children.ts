/** Child processes of the benchmark: servers (wait for `LISTENING <port>`) and one-shot jobs (`RESULT {json}`). */
import { spawn, type ChildProcess } from 'node:child_process';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';

/** A running server child. */
export interface ServerChild {
  readonly name: string;
  readonly url: string;
  /** The server's process id (its main thread's id too, on Linux). */
  readonly pid: number;
  stop(): Promise<void>;
}

/**
 * Another Node to run a server under (`BENCH_NODE`), with its own copy of the app (`BENCH_NODE_APP`: the compiled
 * `dist/` and `node_modules` built for that Node; scripts/bench-node.mjs prepares it).
 */
export interface Runtime {
  /** The `node` executable. */
  readonly node: string;
  /** The app folder holding `dist/` and `node_modules/`. */
  readonly app: string;
}

function script(name: string, runtime?: Runtime): string {
  return runtime === undefined
    ? path.join(__dirname, `${name}.js`)
    : path.join(runtime.app, 'dist', 'bench', `${name}.js`);
}

function collect(child: ChildProcess, name: string): { lines: string[]; err: string[] } {
  const lines: string[] = [];
  const err: string[] = [];
  child.stderr?.on('data', (d: Buffer) => {
    err.push(d.toString());
    if (err.length > 50) err.shift();
  });
  child.stdout?.on('data', (d: Buffer) => lines.push(...d.toString().split('\n')));
  child.on('error', (e) => err.push(`${name}: ${e.message}`));
  return { lines, err };
}

/**
 * Starts `dist/bench/{name}.js` (under `runtime`'s Node and copy of the app, if given) with extra env and waits (up to `timeoutMs`) for its `LISTENING` line.
 * Stdout after that is ignored; stderr is kept for error reports.
 */
export function startServer(
  name: string,
  env: Record<string, string>,
  timeoutMs = 120_000,
  runtime?: Runtime,
): Promise<ServerChild> {
  const child = spawn(runtime?.node ?? process.execPath, [script(name, runtime)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { lines, err } = collect(child, name);
  return new Promise((resolve, reject) => {
    const timer = setTimeout(
      () => fail(new Error(`${name} did not start in ${timeoutMs} ms: ${err.join('').slice(-2000)}`)),
      timeoutMs,
    );
    const fail = (e: Error): void => {
      clearTimeout(timer);
      child.kill('SIGKILL');
      reject(e);
    };
    child.on('exit', (code) =>
      fail(new Error(`${name} exited (${code}) before listening: ${err.join('').slice(-2000)}`)),
    );
    child.stdout?.on('data', () => {
      const line = lines.find((l) => l.startsWith('LISTENING '));
      if (line === undefined) return;
      clearTimeout(timer);
      child.removeAllListeners('exit');
      child.stdout?.removeAllListeners('data');
      child.stdout?.resume();
      resolve({
        name,
        url: `http://127.0.0.1:${line.slice('LISTENING '.length).trim()}`,
        pid: child.pid as number,
        stop: () =>
          new Promise<void>((done) => {
            if (child.exitCode !== null || child.signalCode !== null) return done(); // exited, or killed by a signal
            const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
            child.once('exit', () => {
              clearTimeout(kill);
              done();
            });
            child.kill('SIGTERM');
          }),
      });
    });
  });
}

/** Runs `dist/bench/{name}.js` to completion and parses its `RESULT {json}` line. */
export function runJob<T>(name: string, env: Record<string, string>): Promise<T> {
  const child = spawn(process.execPath, [script(name)], {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const { lines, err } = collect(child, name);
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const line = lines.find((l) => l.startsWith('RESULT '));
      if (code !== 0 || line === undefined) reject(new Error(`${name} failed (${code}): ${err.join('').slice(-2000)}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)) as T);
    });
  });
}

/**
 * The second Node of the benchmark, from `BENCH_NODE` (its executable) and `BENCH_NODE_APP` (a copy of the app with
 * node_modules built for it: `node scripts/bench-node.mjs` prepares both and prints the settings). The current
 * build (`dist/`, host.json) is copied into that app first. `undefined` when not set.
 */
export async function secondNode(root: string): Promise<Runtime | undefined> {
  const node = process.env['BENCH_NODE'];
  const app = process.env['BENCH_NODE_APP'];
  if (node === undefined || node === '') return undefined;
  if (app === undefined || app === '') throw new Error('BENCH_NODE needs BENCH_NODE_APP (scripts/bench-node.mjs)');
  await fs.rm(path.join(app, 'dist'), { recursive: true, force: true });
  await fs.cp(path.join(root, 'dist'), path.join(app, 'dist'), { recursive: true });
  await fs.copyFile(path.join(root, 'host.json'), path.join(app, 'host.json'));
  return { node, app };
}
