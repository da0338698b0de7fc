import { spawn, type ChildProcess } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import * as fs from 'node:fs';
import * as net from 'node:net';
import { Redis } from 'ioredis';
import { baseRedisOptions } from '../../lib/platform/redis/connection';
import type { Timers } from '../../lib/platform/timers';
import type { LogLevel, Logger } from '../../lib/platform/logger';
import { exitOf } from '../support/child-process';
import { eventually as poll } from '../support/eventually';

/** The shared test Redis. */
export const REDIS_PORT = 6379;

/** A key prefix of its own for one test. */
export const testPrefix = (name: string): string => `test:ctx:${name}:${randomUUID().slice(0, 8)}:`;

/** A client on the shared test Redis with the service's options (a roomier budget: CI machines are noisy). */
export async function testClient(port = REDIS_PORT): Promise<Redis> {
  const c = new Redis({ ...baseRedisOptions(250), port, host: '127.0.0.1' });
  c.on('error', () => undefined);
  await c.connect();
  return c;
}

/** Deletes every key under a prefix. */
export async function cleanup(client: Redis, prefix: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${prefix}*`, 'COUNT', 1000);
    cursor = next;
    if (keys.length > 0) await client.del(...keys);
  } while (cursor !== '0');
}

/** A manual clock, ms. */
export class FakeClock {
  constructor(public t = Date.UTC(2026, 10, 30, 10, 0, 0)) {}
  readonly now = (): number => this.t;
  advance(ms: number): void {
    this.t += ms;
  }
}

/** Manual timers on a {@link FakeClock}: nothing runs until {@link FakeTimers.runDue}. */
export class FakeTimers implements Timers {
  readonly pending = new Map<number, { fn: () => void; at: number; ms: number }>();
  private next = 1;
  constructor(private readonly clock: FakeClock) {}
  setTimeout(fn: () => void, ms: number): unknown {
    const id = this.next++;
    this.pending.set(id, { fn, at: this.clock.now() + ms, ms });
    return id;
  }
  clearTimeout(h: unknown): void {
    this.pending.delete(h as number);
  }
  /** Delays (ms) of the pending timers, in creation order. */
  get delays(): number[] {
    return [...this.pending.values()].map((p) => p.ms);
  }
  /** Runs every timer due at the clock's time. */
  runDue(): void {
    for (const [id, p] of [...this.pending]) {
      if (p.at <= this.clock.now()) {
        this.pending.delete(id);
        p.fn();
      }
    }
  }
}

/** A logger recording lines (to check that no secret is ever logged). */
export function recordingLogger(): Logger & { lines: string[] } {
  const lines: string[] = [];
  const rec = (level: LogLevel) => (msg: string, fields?: object) =>
    void lines.push(JSON.stringify({ level, msg, ...fields }));
  return { lines, debug: rec('debug'), info: rec('info'), warn: rec('warn'), error: rec('error') };
}

/** Waits until `cond()` holds (polling each ms), or fails after `ms`. */
export async function eventually(cond: () => boolean | Promise<boolean>, ms = 3000, what = 'condition'): Promise<void> {
  await poll(
    async () => cond(),
    (ok) => ok,
    what,
    ms,
    1,
  );
}

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const { port } = s.address() as net.AddressInfo;
      s.close(() => resolve(port));
    });
  });
}

/** A redis-server of a test's own (`--save '' --appendonly no`), to stop, hang and restart. */
export class OwnRedis {
  private proc: ChildProcess | undefined;
  private constructor(
    readonly port: number,
    private readonly extraArgs: readonly string[],
  ) {}

  static async start(extraArgs: readonly string[] = []): Promise<OwnRedis> {
    const r = new OwnRedis(await freePort(), extraArgs);
    await r.start();
    return r;
  }

  /** (Re)starts the server on the same port and waits until it answers. */
  async start(): Promise<void> {
    this.proc = spawn(
      'redis-server',
      ['--port', String(this.port), '--bind', '127.0.0.1', '--save', '', '--appendonly', 'no', ...this.extraArgs],
      { stdio: 'ignore' },
    );
    await eventually(
      () =>
        new Promise<boolean>((resolve) => {
          const s = net.connect(this.port, '127.0.0.1', () => (s.destroy(), resolve(true)));
          s.on('error', () => resolve(false));
        }),
      5000,
      `redis-server on port ${this.port}`,
    );
  }

  /** Kills the server (SIGKILL) and waits for it to exit. */
  async kill(): Promise<void> {
    const p = this.proc;
    this.proc = undefined;
    if (p === undefined) return;
    if (p.exitCode === null && p.signalCode === null) p.kill('SIGKILL');
    await exitOf(p, `redis-server on port ${this.port} to exit after SIGKILL`, 10_000);
  }

  /**
   * Freezes (SIGSTOP) or resumes (SIGCONT) the server: connections stay open but nothing answers. Waits
   * until the kernel reports the process stopped (state `T`) or running again.
   */
  async signal(sig: 'SIGSTOP' | 'SIGCONT'): Promise<void> {
    const p = this.proc;
    if (p?.pid === undefined || p.exitCode !== null) return;
    p.kill(sig);
    const stopped = (): boolean => / T /.test(fs.readFileSync(`/proc/${p.pid}/stat`, 'utf8').replace(/^.*\)/, ')'));
    await eventually(() => stopped() === (sig === 'SIGSTOP'), 2000, `redis-server ${sig}`);
  }
}
