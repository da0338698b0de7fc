/**
 * Where the telemetry overhead goes, by part: `npm run bench:telemetry`, or `node
 * dist/bench/telemetry-decompose.js [--rate 500] [--rounds 12] [--seconds 2] [--processes 3] [--arms a,b]`.
 * Runs the service with telemetry off and with one part on at a time (`servers/service-traced.ts`):
 * `context` (only the async context tracking OpenTelemetry needs), `metrics`, `spans` (tracing without
 * metrics), `on` (all, every trace sampled) and `deployed` (metrics, and tracing sampled as the Azure Monitor
 * distro does by default: 5 traces/s). Every arm serves the same fixed offered rate (so batching is alike),
 * in interleaved rounds, each round on the next of its `--processes` server processes; reports the median
 * main-thread CPU per request of each arm (Linux: `/proc/<pid>/task/<pid>/stat`, 10 ms ticks) and its excess
 * over `off`. At a fixed rate the CPU difference is the part's cost, without the closed loop's feedback (a
 * slower arm batches less, which makes every request dearer). Prints the figures and writes them to
 * `bench/results/telemetry-decompose.json`.
 */
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { startServer, type ServerChild } from './children';
import { loadRun } from './load';
import { paymentBody } from '../test/support/load/payment-body';
import { percentile } from '../test/support/load/percentile';
import { deleteKeys } from './redis-keys';

const ARMS = ['off', 'context', 'metrics', 'spans', 'on', 'deployed'] as const;
type Arm = (typeof ARMS)[number];

/** Main-thread CPU time of a process so far, µs (utime + stime of its first thread, 10 ms ticks). */
function mainThreadCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

/** The `p`th percentile of unsorted values. */
const quantile = (v: readonly number[], p: number): number =>
  percentile(
    [...v].sort((a, b) => a - b),
    p,
  );
const median = (v: readonly number[]): number => quantile(v, 50);
const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};

async function main(): Promise<void> {
  const rate = arg('--rate', 500);
  const rounds = arg('--rounds', 12);
  const seconds = arg('--seconds', 2);
  const processes = arg('--processes', 3);
  const at = process.argv.indexOf('--arms');
  const arms: readonly Arm[] =
    at >= 0 ? ARMS.filter((a) => a === 'off' || (process.argv[at + 1] ?? '').split(',').includes(a)) : ARMS;
  const root = path.resolve(__dirname, '..', '..');
  const redisUrl = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
  const env = {
    MODEL_DIR: path.join(root, 'models'),
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL: redisUrl,
    REDIS_KEY_PREFIX: 'bench:teld:',
    OTEL_TRACES_EXPORTER: 'none',
    APPLICATIONINSIGHTS_CONNECTION_STRING: '',
  };
  const servers = new Map<Arm, ServerChild[]>(arms.map((a) => [a, []]));
  try {
    // several processes per arm, used in turn: a process's own luck (JIT, heap layout, thread placement) lasts
    // its whole life, so one process per arm would not average it out however many rounds run
    for (let p = 0; p < processes; p++)
      for (const arm of arms)
        servers.get(arm)?.push(
          await startServer(arm === 'off' ? 'servers/service' : 'servers/service-traced', {
            ...env,
            BENCH_TELEMETRY: arm,
          }),
        );
    const server = (arm: Arm, r: number): ServerChild => servers.get(arm)?.[r % processes] as ServerChild;
    const run = (s: ServerChild, durationSec: number) =>
      loadRun({ url: s.url, path: '/api/score', body: paymentBody, connections: 32, durationSec, rate });
    for (const s of [...servers.values()].flat()) await run(s, 2); // warm-up
    const cpu = new Map<Arm, number[]>(arms.map((a) => [a, []]));
    const rps = new Map<Arm, number[]>(arms.map((a) => [a, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < arms.length; k++) {
        const arm = arms[(k + r) % arms.length] as Arm; // rotate the order: no arm always runs first
        const s = server(arm, r);
        const before = mainThreadCpuUs(s.pid);
        const f = await run(s, seconds);
        const served = f.rps * seconds;
        cpu.get(arm)?.push((mainThreadCpuUs(s.pid) - before) / Math.max(1, served));
        rps.get(arm)?.push(f.rps);
      }
    }
    const offs = cpu.get('off') ?? [];
    const off = median(offs);
    const figures = Object.fromEntries(
      arms.map((a) => {
        const us = cpu.get(a) ?? [];
        // paired by round (the arms of one round ran back to back): the machine's drift cancels out
        const diffs = us.map((v, r) => v - (offs[r] ?? NaN));
        const ratio = (d: number): number => Math.round((d / off) * 1000) / 1000;
        return [
          a,
          {
            rps: Math.round(median(rps.get(a) ?? [])),
            main_cpu_us_per_req: Math.round(median(us)),
            vs_off_us: Math.round(median(diffs)),
            vs_off_us_iqr: [Math.round(quantile(diffs, 25)), Math.round(quantile(diffs, 75))],
            // the part's cost as a share of a request's main-thread CPU with telemetry off
            vs_off_ratio: ratio(median(diffs)),
            vs_off_ratio_iqr: [ratio(quantile(diffs, 25)), ratio(quantile(diffs, 75))],
          },
        ];
      }),
    );
    const out = { node: process.version, rate, rounds, seconds, processes, arms: figures };
    const dir = path.join(root, 'bench', 'results');
    mkdirSync(dir, { recursive: true });
    writeFileSync(path.join(dir, 'telemetry-decompose.json'), `${JSON.stringify(out, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(out)}\n`);
  } finally {
    await Promise.all([...servers.values()].flat().map((s) => s.stop()));
    const redis = new Redis(redisUrl);
    await deleteKeys(redis, 'bench:teld:*');
    redis.disconnect();
  }
}

void main();
