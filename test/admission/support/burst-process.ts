import * as path from 'node:path';
import type { BurstFigures } from '../../support/load/burst-client';
import { resultOfClient } from './client-process';

/**
 * Runs the burst client (`test/support/load/burst-client.ts`) in its own process against `url`: `rounds` × `n` concurrent
 * `POST /api/score` on fresh connections, `x-deadline-ms` if given. Fails after `ms` naming what it awaited.
 */
export function burstInOwnProcess(
  url: string,
  opts: { n: number; rounds: number; deadlineMs?: number; requestTimeoutMs: number },
  ms: number,
): Promise<BurstFigures> {
  const script = path.join(__dirname, '..', '..', 'support', 'load', 'burst-client.js');
  const args = [
    url,
    String(opts.n),
    String(opts.rounds),
    String(opts.deadlineMs ?? '-'),
    '-',
    String(opts.requestTimeoutMs),
  ];
  return resultOfClient(script, args, `${opts.rounds} × ${opts.n} requests from the burst client's process`, ms);
}
