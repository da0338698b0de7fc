import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { BurstFigures } from '../../../bench/burst-client';
import { within } from '../../support/eventually';

/**
 * Runs the burst client (`bench/burst-client.ts`) in its own process against `url`: `rounds` × `n` concurrent
 * `POST /api/score` on fresh connections, `x-deadline-ms` if given. Fails after `ms` naming what it awaited.
 */
export function burstInOwnProcess(
  url: string,
  opts: { n: number; rounds: number; deadlineMs?: number; requestTimeoutMs: number },
  ms: number,
): Promise<BurstFigures> {
  const script = path.join(__dirname, '..', '..', '..', 'bench', 'burst-client.js');
  const args = [
    url,
    String(opts.n),
    String(opts.rounds),
    String(opts.deadlineMs ?? '-'),
    '-',
    String(opts.requestTimeoutMs),
  ];
  const child = spawn(process.execPath, [script, ...args], { stdio: ['ignore', 'pipe', 'pipe'] });
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  const done = new Promise<BurstFigures>((resolve, reject) => {
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || line === undefined) reject(new Error(`burst client exited ${code}: ${err.slice(-2000)}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)) as BurstFigures);
    });
  });
  return within(done, `${opts.rounds} × ${opts.n} requests from the burst client's process`, ms).finally(() => {
    if (child.exitCode === null) child.kill('SIGKILL');
  });
}
