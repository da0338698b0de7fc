/**
 * The burst scenario of `npm run bench`: bursts of fresh connections on a freshly started instance, the
 * client in its own process (`test/support/load/burst-client.ts`), as a real caller is.
 *
 * - `<model>.burst.deadline_2000`: 3 rounds × 500 concurrent requests with `x-deadline-ms: 2000` (callers
 *   willing to wait 2 s): `ok`, `refused` (503 with `Retry-After`), `other`.
 * - `<model>.burst.default`: the same at the default deadline (`REQUEST_DEADLINE_MS`), next to
 *   `<model>.burst.naive_functions` (the naive Functions app under the same host, same bursts): its 200s, and
 *   those answered within that deadline on the client's clock.
 * - `<model>.burst.late_200s`: 200s the service sent after their own deadline (its `admission.late_answers`),
 *   for each burst, and as a share of its 200s.
 */
import { spawn } from 'node:child_process';
import * as path from 'node:path';
import type { BurstFigures } from '../test/support/load/burst-client';
import { startServer, type ServerChild } from './children';
import { closedLoop, MAX_CONNECTIONS } from './overload';

/** The burst section of one model's figures. */
export interface BurstSection {
  readonly deadline_2000: BurstFigures;
  readonly default: BurstFigures;
  readonly naive_functions: BurstFigures;
  readonly late_200s: { readonly deadline_2000: number; readonly default: number; readonly share_of_200s: number };
}

const N = 500;
const ROUNDS = 3;
/** `REQUEST_DEADLINE_MS`'s default: the deadline naive answers are counted within. */
const DEFAULT_DEADLINE_MS = 1000;

/** Runs `dist/test/support/load/burst-client.js` in its own process. */
export function runBurstClient(url: string, deadline: number | undefined, withinMs?: number): Promise<BurstFigures> {
  const args = [url, String(N), String(ROUNDS), String(deadline ?? '-'), String(withinMs ?? deadline ?? '-')];
  const child = spawn(
    process.execPath,
    [path.join(__dirname, '..', 'test', 'support', 'load', 'burst-client.js'), ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  child.stderr.on('data', (d: Buffer) => (err += d.toString()));
  return new Promise((resolve, reject) => {
    child.on('exit', (code) => {
      const line = out.split('\n').find((l) => l.startsWith('RESULT '));
      if (code !== 0 || line === undefined) reject(new Error(`burst-client failed (${code}): ${err.slice(-2000)}`));
      else resolve(JSON.parse(line.slice('RESULT '.length)) as BurstFigures);
    });
  });
}

async function lateAnswers(url: string): Promise<number> {
  const res = await fetch(`${url}/__bench/admission`, { signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { engine?: { deadline?: { late?: number } } | null };
  return body.engine?.deadline?.late ?? 0;
}

/** The scenario on fresh servers: the service (`serviceEnv`), then the naive Functions app (`naiveEnv`). */
export async function burstScenario(
  serviceEnv: Record<string, string>,
  naiveEnv: Record<string, string>,
  body: () => string,
  warmSec: number,
  log: (msg: string) => void,
): Promise<BurstSection> {
  const warm = (s: ServerChild): Promise<unknown> => closedLoop(s.url, body, MAX_CONNECTIONS, warmSec);
  const service = await startServer('servers/service', serviceEnv);
  let d2000: BurstFigures;
  let dflt: BurstFigures;
  let late2000: number;
  let lateDefault: number;
  try {
    await warm(service);
    const late0 = await lateAnswers(service.url);
    d2000 = await runBurstClient(service.url, 2000);
    const late1 = await lateAnswers(service.url);
    dflt = await runBurstClient(service.url, undefined, DEFAULT_DEADLINE_MS);
    lateDefault = (await lateAnswers(service.url)) - late1;
    late2000 = late1 - late0;
  } finally {
    await service.stop();
  }
  log(`burst x-deadline-ms 2000: ${d2000.ok} ok, ${d2000.refused} refused, ${d2000.other} other (${late2000} late)`);
  log(`burst default deadline: ${dflt.ok} ok, ${dflt.refused} refused, ${dflt.other} other (${lateDefault} late)`);
  const naive = await startServer('servers/naive-functions', naiveEnv);
  let naiveFigures: BurstFigures;
  try {
    await warm(naive);
    naiveFigures = await runBurstClient(naive.url, undefined, DEFAULT_DEADLINE_MS);
  } finally {
    await naive.stop();
  }
  log(
    `burst naive_functions: ${naiveFigures.ok} ok, ${naiveFigures.ok_within_deadline} within ${DEFAULT_DEADLINE_MS} ms, ${naiveFigures.other} other`,
  );
  const ok = d2000.ok + dflt.ok;
  return {
    deadline_2000: d2000,
    default: dflt,
    naive_functions: naiveFigures,
    late_200s: {
      deadline_2000: late2000,
      default: lateDefault,
      share_of_200s: ok === 0 ? 0 : Math.round(((late2000 + lateDefault) / ok) * 10_000) / 10_000,
    },
  };
}
