/**
 * A throwaway PostgreSQL 15 cluster for the tests that STOP a database (never the machine's): `initdb` in a temporary
 * folder the `postgres` user owns, started with `pg_ctl` on a free port of 127.0.0.1 (trust auth, user `postgres`),
 * stopped with `pg_ctl stop -m fast`, started again on the same port. As root, the binaries run through
 * `runuser -u postgres --`. Every step is bounded (`pg_ctl -w -t`, and a bound on each child process).
 */
import { execFile } from 'node:child_process';
import { chownSync, mkdtempSync, rmSync } from 'node:fs';
import * as net from 'node:net';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { promisify } from 'node:util';

const run = promisify(execFile);
const BIN = process.env['PG_BIN_DIR'] ?? '/usr/lib/postgresql/15/bin';
/** Bound of each `initdb` / `pg_ctl` call, ms. */
const STEP_MS = 60_000;

/** A free TCP port on 127.0.0.1 (bound, read, released). */
export async function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const s = net.createServer();
    s.once('error', reject);
    s.listen(0, '127.0.0.1', () => {
      const port = (s.address() as net.AddressInfo).port;
      s.close(() => resolve(port));
    });
  });
}

/** The postgres user's uid and gid. */
async function postgresIds(): Promise<{ uid: number; gid: number }> {
  const [uid, gid] = await Promise.all([run('id', ['-u', 'postgres']), run('id', ['-g', 'postgres'])]);
  return { uid: Number(uid.stdout.trim()), gid: Number(gid.stdout.trim()) };
}

/** Runs a PostgreSQL binary as `postgres` (through runuser when root), bounded. */
async function asPostgres(bin: string, args: readonly string[]): Promise<string> {
  const file = path.join(BIN, bin);
  const root = process.getuid?.() === 0;
  const { stdout, stderr } = await run(
    root ? 'runuser' : file,
    root ? ['-u', 'postgres', '--', file, ...args] : [...args],
    {
      timeout: STEP_MS,
    },
  );
  return stdout + stderr;
}

/** A throwaway cluster (see the module comment). */
export class PgCluster {
  private constructor(
    readonly dir: string,
    readonly port: number,
  ) {}

  /** The connection settings of the app (`CASE_STORE=postgres`, database `postgres`, trust auth). */
  get env(): Record<string, string> {
    return {
      CASE_STORE: 'postgres',
      PG_HOST: '127.0.0.1',
      PG_PORT: String(this.port),
      PG_USER: 'postgres',
      PG_DATABASE: 'postgres',
    };
  }

  private get data(): string {
    return path.join(this.dir, 'data');
  }

  /** initdb in a new temporary folder owned by postgres, then started on a free port. */
  static async create(): Promise<PgCluster> {
    const dir = mkdtempSync(path.join(tmpdir(), 'test-pg-cluster-'));
    if (process.getuid?.() === 0) {
      const { uid, gid } = await postgresIds();
      chownSync(dir, uid, gid);
    }
    const c = new PgCluster(dir, await freePort());
    await asPostgres('initdb', ['-D', c.data, '-A', 'trust', '-U', 'postgres', '--no-sync']);
    await c.start();
    return c;
  }

  /** Starts the cluster on its port and waits (bounded) until it accepts connections. */
  async start(): Promise<void> {
    const opts = `-p ${this.port} -k ${this.dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    await asPostgres('pg_ctl', [
      '-D',
      this.data,
      '-o',
      opts,
      '-l',
      path.join(this.dir, 'log'),
      '-w',
      '-t',
      '60',
      'start',
    ]);
  }

  /** `pg_ctl stop -m fast`: connections are cut, the server is down when this resolves. */
  async stop(): Promise<void> {
    await asPostgres('pg_ctl', ['-D', this.data, '-m', 'fast', '-w', '-t', '60', 'stop']);
  }

  /** Stops the cluster if it runs, and removes its folder. */
  async dispose(): Promise<void> {
    await this.stop().catch(() => undefined);
    rmSync(this.dir, { recursive: true, force: true });
  }
}
