/**
 * A burst client in its own process, as a real caller is: `rounds` × `n` concurrent `POST {url}/api/score`
 * requests, each on a fresh connection, one round after the other. Used by the benchmark (`bench/burst.ts`)
 * and by the burst tests.
 *
 * `node dist/test/support/load/burst-client.js <url> [n=500] [rounds=3] [deadlineMs|-] [withinMs|-] [timeoutMs=30000]`: with
 * `deadlineMs` the requests carry `x-deadline-ms`; 200s answered within `withinMs` (default `deadlineMs`) on
 * the client's clock are counted apart. Prints one line `RESULT {json}` ({@link BurstFigures}) and exits 0.
 */
import * as http from 'node:http';
import { paymentBody } from './payment-body';
import { percentile } from './percentile';

/** What one burst of rounds got. Latencies are the client's, ms. */
export interface BurstFigures {
  readonly sent: number;
  /** 200 answers. */
  readonly ok: number;
  /** 200 answers within `withinMs` of their sending (the client's clock); all 200s without `withinMs`. */
  readonly ok_within_deadline: number;
  /** 503 answers carrying `Retry-After`. */
  readonly refused: number;
  /** Everything else: other statuses (by status), 503s without `Retry-After`, timeouts and connection errors. */
  readonly other: number;
  readonly other_by_kind: Readonly<Record<string, number>>;
  /** 503 answers by problem `code`. */
  readonly refused_by_code: Readonly<Record<string, number>>;
  /** 200s of each round. */
  readonly ok_by_round: readonly number[];
  readonly p50_ok_ms: number;
  readonly p99_ok_ms: number;
  readonly max_ok_ms: number;
}

interface Answer {
  readonly status: number | 'timeout' | 'error';
  readonly retryAfter: boolean;
  readonly code: string | undefined;
  readonly ms: number;
}

function post(url: URL, body: string, headers: Record<string, string>, timeoutMs: number): Promise<Answer> {
  const t0 = performance.now();
  return new Promise((resolve) => {
    let settled = false;
    const done = (a: Omit<Answer, 'ms'>): void => {
      if (settled) return;
      settled = true;
      resolve({ ...a, ms: performance.now() - t0 });
    };
    const req = http.request(
      url,
      {
        method: 'POST',
        agent: false,
        headers: { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body), ...headers },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          done({
            status: res.statusCode ?? 0,
            retryAfter: res.headers['retry-after'] !== undefined,
            code: /"code":"([a-z_]+)"/.exec(Buffer.concat(chunks).toString('utf8'))?.[1],
          }),
        );
        res.on('error', () => done({ status: 'error', retryAfter: false, code: undefined }));
      },
    );
    req.setTimeout(timeoutMs, () => {
      done({ status: 'timeout', retryAfter: false, code: undefined });
      req.destroy();
    });
    req.on('error', () => done({ status: 'error', retryAfter: false, code: undefined }));
    req.end(body);
  });
}

/** Runs the burst (see the module comment). */
export async function burst(
  base: string,
  n: number,
  rounds: number,
  deadlineMs: number | undefined,
  timeoutMs: number,
  withinMs: number | undefined = deadlineMs,
): Promise<BurstFigures> {
  const url = new URL('/api/score', base);
  const headers: Record<string, string> = deadlineMs === undefined ? {} : { 'x-deadline-ms': String(deadlineMs) };
  const answers: Answer[] = [];
  const okByRound: number[] = [];
  for (let r = 0; r < rounds; r++) {
    const round = await Promise.all(Array.from({ length: n }, () => post(url, paymentBody(), headers, timeoutMs)));
    okByRound.push(round.filter((a) => a.status === 200).length);
    answers.push(...round);
  }
  const okMs = answers
    .filter((a) => a.status === 200)
    .map((a) => a.ms)
    .sort((a, b) => a - b);
  const otherByKind: Record<string, number> = {};
  const refusedByCode: Record<string, number> = {};
  let refused = 0;
  for (const a of answers) {
    if (a.status === 200) continue;
    if (a.status === 503 && a.retryAfter) {
      refused++;
      refusedByCode[a.code ?? 'none'] = (refusedByCode[a.code ?? 'none'] ?? 0) + 1;
    } else {
      const kind = a.status === 503 ? '503_without_retry_after' : String(a.status);
      otherByKind[kind] = (otherByKind[kind] ?? 0) + 1;
    }
  }
  const round1 = (v: number): number => Math.round(v * 10) / 10;
  return {
    sent: answers.length,
    ok: okMs.length,
    ok_within_deadline: withinMs === undefined ? okMs.length : okMs.filter((ms) => ms <= withinMs).length,
    refused,
    other: answers.length - okMs.length - refused,
    other_by_kind: otherByKind,
    refused_by_code: refusedByCode,
    ok_by_round: okByRound,
    p50_ok_ms: round1(percentile(okMs, 50)),
    p99_ok_ms: round1(percentile(okMs, 99)),
    max_ok_ms: round1(okMs.at(-1) ?? Number.NaN),
  };
}

async function main(): Promise<void> {
  const [url, n = '500', rounds = '3', deadline = '-', within = deadline, timeout = '30000'] = process.argv.slice(2);
  if (url === undefined)
    throw new Error('usage: burst-client <url> [n] [rounds] [deadlineMs|-] [withinMs|-] [timeoutMs]');
  const ms = (v: string): number | undefined => (v === '' || v === '-' ? undefined : Number(v));
  const figures = await burst(url, Number(n), Number(rounds), ms(deadline), Number(timeout), ms(within));
  process.stdout.write(`RESULT ${JSON.stringify(figures)}\n`);
}

if (require.main === module) {
  main().catch((err: unknown) => {
    process.stderr.write(`burst-client failed: ${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}
