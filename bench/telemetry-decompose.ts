/**
 * Where the telemetry overhead goes, by part: `node dist/bench/telemetry-decompose.js [--rate 500] [--rounds 12]
 * [--seconds 2]`. Runs the service with telemetry off, then with one part on at a time (`context`: only the
 * async context tracking OpenTelemetry needs; `metrics`; `spans`: tracing without metrics), all on, and
 * `deployed` (sampled as the Azure Monitor distro does by default: 5 traces/s) (`servers/service-traced.ts`), each at the same fixed offered rate (so batching is alike), in interleaved
 * rounds, and reports the median main-thread CPU per request of each (Linux: `/proc/<pid>/task/<pid>/stat`,
 * 10 ms ticks). At a fixed rate every arm serves the same load, so the CPU difference is the part's cost,
 * without the closed loop's feedback (a slower arm batches less, which makes every request dearer).
 */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { startServer, type ServerChild } from './children';
import { loadRun } from './load';
import { paymentBody } from './payment-body';
import { deleteKeys } from './redis-keys';

const ARMS = ['off', 'context', 'metrics', 'spans', 'on', 'deployed'] as const;
type Arm = (typeof ARMS)[number];

/** Main-thread CPU time of a process so far, µs (utime + stime of its first thread, 10 ms ticks). */
function mainThreadCpuUs(pid: number): number {
  const stat = readFileSync(`/proc/${pid}/task/${pid}/stat`, 'utf8');
  const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
  return (Number(fields[11]) + Number(fields[12])) * 10_000;
}

const median = (v: number[]): number => [...v].sort((a, b) => a - b)[Math.floor((v.length - 1) / 2)] ?? NaN;
const arg = (name: string, fallback: number): number => {
  const at = process.argv.indexOf(name);
  return at >= 0 ? Number(process.argv[at + 1]) : fallback;
};

async function main(): Promise<void> {
  const rate = arg('--rate', 500);
  const rounds = arg('--rounds', 12);
  const seconds = arg('--seconds', 2);
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
  const servers = new Map<Arm, ServerChild>();
  try {
    for (const arm of ARMS)
      servers.set(
        arm,
        await startServer(arm === 'off' ? 'servers/service' : 'servers/service-traced', {
          ...env,
          BENCH_TELEMETRY: arm,
        }),
      );
    const run = (arm: Arm, durationSec: number) =>
      loadRun({
        url: (servers.get(arm) as ServerChild).url,
        path: '/api/score',
        body: paymentBody,
        connections: 32,
        durationSec,
        rate,
      });
    for (const arm of ARMS) await run(arm, 2); // warm-up
    const cpu = new Map<Arm, number[]>(ARMS.map((a) => [a, []]));
    const rps = new Map<Arm, number[]>(ARMS.map((a) => [a, []]));
    for (let r = 0; r < rounds; r++) {
      for (let k = 0; k < ARMS.length; k++) {
        const arm = ARMS[(k + r) % ARMS.length] as Arm; // rotate the order: no arm always runs first
        const pid = (servers.get(arm) as ServerChild).pid;
        const before = mainThreadCpuUs(pid);
        const f = await run(arm, seconds);
        const served = f.rps * seconds;
        cpu.get(arm)?.push((mainThreadCpuUs(pid) - before) / Math.max(1, served));
        rps.get(arm)?.push(f.rps);
      }
    }
    const off = median(cpu.get('off') ?? []);
    const arms = Object.fromEntries(
      ARMS.map((a) => {
        const us = Math.round(median(cpu.get(a) ?? []));
        return [
          a,
          { rps: Math.round(median(rps.get(a) ?? [])), main_cpu_us_per_req: us, vs_off_us: Math.round(us - off) },
        ];
      }),
    );
    process.stdout.write(`${JSON.stringify({ rate, rounds, seconds, arms })}\n`);
  } finally {
    await Promise.all([...servers.values()].map((s) => s.stop()));
    const redis = new Redis(redisUrl);
    await deleteKeys(redis, 'bench:teld:*');
    redis.disconnect();
  }
}

void main();
