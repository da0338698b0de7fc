/**
 * Start-up benchmark (`npm run bench:start [-- --runs N] [-- --cold]`): how long `npm start` on a checkout that is
 * already built takes to answer 200 on `GET /api/health/ready` (model loaded and a sample inference passed), and
 * on `GET /api/health/live`.
 *
 * Each run spawns `npm start` as a user does (npm, its shell, `scripts/start.mjs`, the host) on a free port
 * (`PORT`), in its own process group, and polls both routes every 10 ms from the spawn (bounded: `--timeout-ms`,
 * default 60 000). Then it sends SIGTERM to the group, as Ctrl+C reaches every process of a terminal's job, and
 * waits until no process of the group is left. Runs of `node dist/local/main.js` (the host alone: no npm, no build
 * check) alternate with them, to show npm's share. `--cold` adds one `npm start` after back-dating
 * `dist/.build-stamp`, so that it runs the clean build first (tens of seconds). Whether a run built is read from
 * `scripts/start.mjs`'s `building` line on stderr. Posix only (process groups).
 *
 * Prints median/min/max and writes bench/results/start.json. The environment is passed on as it is (a `REDIS_URL`
 * makes the host connect to Redis, as it would for the user); `start.json` says whether one was set.
 */
import { spawn, spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as http from 'node:http';
import * as net from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { appRoot } from '../lib/config/app-root';

/** The goal for a warm `npm start`, ms. */
const TARGET_MS = 2000;
const POLL_MS = 10;

/** One start, ms from the spawn. */
export interface StartSample {
  readonly ready_ms: number;
  readonly live_ms: number;
  /** From SIGTERM to the last process of the group gone, ms. */
  readonly stop_ms: number;
  /** Whether `npm start` ran the build first (its `building` line). */
  readonly built: boolean;
}

/** Median, min and max of a set of figures, ms (one decimal). */
export interface Spread {
  readonly median: number;
  readonly min: number;
  readonly max: number;
}

/** Median (mean of the middle two for an even count), min and max. @throws RangeError on an empty list. */
export function spread(values: readonly number[]): Spread {
  if (values.length === 0) throw new RangeError('spread of no values');
  const s = [...values].sort((a, b) => a - b);
  const mid = s.length >> 1;
  const median = s.length % 2 === 1 ? (s[mid] as number) : ((s[mid - 1] as number) + (s[mid] as number)) / 2;
  const r = (v: number) => Math.round(v * 10) / 10;
  return { median: r(median), min: r(s[0] as number), max: r(s[s.length - 1] as number) };
}

function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(name);
  const v = i < 0 ? undefined : Number(process.argv[i + 1]);
  if (v !== undefined && !(Number.isInteger(v) && v > 0)) throw new Error(`${name} needs a positive integer`);
  return v ?? fallback;
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** GET status, or 0 when nothing answers (not listening yet, reset, 1 s time-out). */
function status(url: string): Promise<number> {
  return new Promise((resolve) => {
    const req = http.get(url, { agent: false, timeout: 1000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy());
    req.on('error', () => resolve(0));
  });
}

/**
 * Whether a process of the group is still running. Zombies do not count: once npm's shell is gone, the host is
 * init's child, and init may reap it only later (about 1.5 s on this machine), while the process is done.
 */
function groupAlive(pgid: number): boolean {
  let entries: string[];
  try {
    entries = fs.readdirSync('/proc').filter((e) => /^\d+$/.test(e));
  } catch {
    entries = []; // no /proc: ask the kernel about the group (a zombie then counts as running)
  }
  if (entries.length === 0) {
    try {
      process.kill(-pgid, 0);
      return true;
    } catch {
      return false;
    }
  }
  for (const pid of entries) {
    let stat: string;
    try {
      stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    } catch {
      continue; // gone meanwhile
    }
    const [state, , pgrp] = stat.slice(stat.lastIndexOf(')') + 2).split(' '); // state ppid pgrp …
    if (Number(pgrp) === pgid && state !== 'Z') return true;
  }
  return false;
}

/**
 * SIGTERM to the group, then waits until none of its processes is left. @returns ms from SIGTERM to gone.
 * @throws Error when some process outlives the SIGTERM by 20 s (the group is then killed).
 */
async function stopGroup(pgid: number, what: string): Promise<number> {
  const s0 = performance.now();
  if (groupAlive(pgid)) process.kill(-pgid, 'SIGTERM');
  while (groupAlive(pgid) && performance.now() - s0 < 20_000) await sleep(20);
  if (groupAlive(pgid)) {
    process.kill(-pgid, 'SIGKILL');
    throw new Error(`${what}: processes of group ${pgid} still running 20 s after SIGTERM (killed)`);
  }
  return performance.now() - s0;
}

/**
 * Starts `command` in its own process group, measures the first 200 of live and ready, stops the group.
 * @throws Error when the process exits before ready, ready is not reached within `timeoutMs`, or the group
 *   outlives SIGTERM by 20 s (then it is killed).
 */
async function startOnce(command: readonly [string, ...string[]], timeoutMs: number): Promise<StartSample> {
  const root = appRoot();
  const port = await freePort();
  const base = `http://127.0.0.1:${port}/api/health`;
  const t0 = performance.now();
  const child = spawn(command[0], command.slice(1), {
    cwd: root,
    env: { ...process.env, PORT: String(port) },
    detached: true, // its own process group: npm, sh and the host get the SIGTERM
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const pgid = child.pid;
  if (pgid === undefined) throw new Error(`could not spawn ${command.join(' ')}`);
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => (stderr = (stderr + d.toString()).slice(-4000)));
  child.stdout.resume(); // the host's own lines: drained, not kept
  let exit: string | undefined;
  child.on('exit', (code, signal) => (exit = `code ${code} signal ${signal}`));
  const what = command.join(' ');
  let live: number | undefined;
  let ready: number | undefined;
  let last = 0;
  try {
    while (ready === undefined) {
      if (exit !== undefined) throw new Error(`${what} exited (${exit}) before ready. stderr:\n${stderr}`);
      if (performance.now() - t0 > timeoutMs)
        throw new Error(`${base}/ready not 200 within ${timeoutMs} ms (last status ${last}). stderr:\n${stderr}`);
      if (live === undefined && (await status(`${base}/live`)) === 200) live = performance.now() - t0;
      last = await status(`${base}/ready`);
      if (last === 200) ready = performance.now() - t0;
      else await sleep(POLL_MS);
    }
  } catch (err) {
    await stopGroup(pgid, what).catch(() => undefined); // the first failure is the one reported
    throw err;
  }
  const stop = await stopGroup(pgid, what);
  return { ready_ms: ready, live_ms: live ?? ready, stop_ms: stop, built: /: building/.test(stderr) };
}

function summary(samples: readonly StartSample[]) {
  return {
    ready_ms: spread(samples.map((s) => s.ready_ms)),
    live_ms: spread(samples.map((s) => s.live_ms)),
    stop_ms: spread(samples.map((s) => s.stop_ms)),
    samples: samples.map((s) => ({
      ready_ms: Math.round(s.ready_ms),
      live_ms: Math.round(s.live_ms),
      stop_ms: Math.round(s.stop_ms),
      built: s.built,
    })),
  };
}

function line(name: string, s: ReturnType<typeof summary>): string {
  const f = (x: Spread) => `${x.median} (${x.min}–${x.max})`;
  return `${name.padEnd(26)} ready ${f(s.ready_ms).padEnd(26)} live ${f(s.live_ms).padEnd(26)} stop ${f(s.stop_ms)}`;
}

async function main(): Promise<void> {
  const runs = arg('--runs', 5);
  const timeoutMs = arg('--timeout-ms', 60_000);
  const root = appRoot();
  const stamp = path.join(root, 'dist', '.build-stamp');
  if (!fs.existsSync(stamp)) throw new Error('dist/.build-stamp missing: run `npm run bench:start` (it builds once)');
  const load0 = os.loadavg();
  const npm: StartSample[] = [];
  const host: StartSample[] = [];
  for (let i = 0; i < runs; i++) {
    npm.push(await startOnce(['npm', 'start'], timeoutMs));
    host.push(await startOnce([process.execPath, path.join(root, 'dist', 'local', 'main.js')], timeoutMs));
    process.stderr.write(`run ${i + 1}/${runs}: npm start ready ${Math.round(npm[i]?.ready_ms ?? 0)} ms\n`);
  }
  const load1 = os.loadavg();
  let cold: StartSample | undefined;
  if (process.argv.includes('--cold')) {
    fs.utimesSync(stamp, new Date(0), new Date(0)); // older than every source: npm start builds first
    cold = await startOnce(['npm', 'start'], Math.max(timeoutMs, 600_000));
  }
  const warm = summary(npm);
  const out = {
    command: 'npm start',
    machine: {
      cpu: os.cpus()[0]?.model ?? 'unknown',
      cores: os.availableParallelism(),
      platform: `${os.platform()} ${os.release()}`,
      node: process.version,
      npm: spawnSync('npm', ['--version'], { encoding: 'utf8' }).stdout.trim(),
      loadavg_1m_before: Number(load0[0]?.toFixed(2)),
      loadavg_1m_after: Number(load1[0]?.toFixed(2)),
      date: new Date().toISOString(),
    },
    settings: { runs, poll_ms: POLL_MS, timeout_ms: timeoutMs, redis_url_set: process.env['REDIS_URL'] !== undefined },
    warm,
    host_only: summary(host),
    ...(cold === undefined ? {} : { cold: summary([cold]) }),
    target: {
      goal: `npm start (built) ready median <= ${TARGET_MS} ms`,
      value: warm.ready_ms.median,
      met: warm.ready_ms.median <= TARGET_MS && npm.every((s) => !s.built),
    },
  };
  const dir = path.join(root, 'bench', 'results');
  fs.mkdirSync(dir, { recursive: true });
  fs.writeFileSync(path.join(dir, 'start.json'), `${JSON.stringify(out, null, 2)}\n`);
  if (npm.some((s) => s.built)) process.stdout.write('warning: a warm run built first; its figure is not warm\n');
  process.stdout.write(
    [
      `start-up, ms from spawn: median (min–max) of ${runs} runs; load average ${load0[0]?.toFixed(2)} → ${load1[0]?.toFixed(2)} on ${out.machine.cores} cores`,
      line('npm start (built)', warm),
      line('node dist/local/main.js', out.host_only),
      ...(out.cold === undefined ? [] : [line(`npm start (build: ${cold?.built === true})`, out.cold)]),
      `goal ${out.target.goal}: ${out.target.met ? 'met' : 'missed'} (${out.target.value} ms)`,
      'wrote bench/results/start.json',
      '',
    ].join('\n'),
  );
}

if (require.main === module)
  main().catch((err: unknown) => {
    process.stderr.write(`bench:start failed: ${err instanceof Error ? err.message : String(err)}\n`);
    process.exit(1);
  });
