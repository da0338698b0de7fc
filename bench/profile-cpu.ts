/**
 * `node dist/bench/profile-cpu.js [seconds] [rate]`: a CPU profile of the service's app thread at a fixed rate
 * (the probe of bench/servers/probe.ts), printed as self time by component and by function (top 40), to find
 * where the CPU per decision goes. Writes the profile to bench/results/cpu-<label>.cpuprofile.gz and the table to
 * bench/results/cpu-profile.json (under the key `BENCH_PROFILE_LABEL`, default `service`, beside earlier labels, so
 * that a `before` and an `after` sit side by side). `BENCH_PROFILE_APP`: profile another built checkout's service.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { appRoot } from '../lib/config/app-root';
import { startServer } from './children';
import { openLoop } from '../test/support/load/open-loop';
import { paymentBody } from '../test/support/load/payment-body';
import { component, type CpuProfile } from './profile-stalls';

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 10);
  const rate = Number(process.argv[3] ?? 400);
  const root = appRoot();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-profile-'));
  const app = process.env['BENCH_PROFILE_APP'];
  const label = process.env['BENCH_PROFILE_LABEL'] ?? 'service';
  const server = await startServer(
    process.env['BENCH_SERVER'] ?? 'servers/service',
    {
      MODEL_DIR: path.join(root, 'models'),
      MODEL_NAME: 'fraud',
      LOG_LEVEL: 'error',
      REDIS_URL: process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: 'bench:prof:',
      DECISION_LOG_DIR: tmp,
      OTEL_TRACES_EXPORTER: 'none',
      APPLICATIONINSIGHTS_CONNECTION_STRING: '',
    },
    120_000,
    app === undefined || app === '' ? undefined : { node: process.execPath, app },
  );
  try {
    await openLoop({ url: server.url, path: '/api/score', body: paymentBody, rate, durationSec: 3 });
    const file = path.join(tmp, 'p.cpuprofile');
    await fetch(`${server.url}/__bench/probe/start?file=${encodeURIComponent(file)}`).then((r) => r.text());
    const f = await openLoop({ url: server.url, path: '/api/score', body: paymentBody, rate, durationSec: seconds });
    await fetch(`${server.url}/__bench/probe/stop`).then((r) => r.text());
    const text = await fs.readFile(file, 'utf8');
    const p = JSON.parse(text) as CpuProfile;
    await fs.writeFile(path.join(root, 'bench', 'results', `cpu-${label}.cpuprofile.gz`), gzipSync(text));
    const byId = new Map(p.nodes.map((n) => [n.id, n]));
    const parent = new Map<number, number>();
    for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
    /** The nearest frame (self or caller) in a package or in our code: who the time is charged to. */
    const owner = (id: number): string => {
      for (let at: number | undefined = id; at !== undefined; at = parent.get(at)) {
        const n = byId.get(at);
        if (n === undefined) break;
        const c = component(n.callFrame.url, n.callFrame.functionName);
        if (c === 'gc' || c.startsWith('lib/') || c === 'local' || c === 'functions' || c === 'bench') return c;
        if (/node_modules\//.test(n.callFrame.url)) return c;
      }
      return component(byId.get(id)?.callFrame.url ?? '', byId.get(id)?.callFrame.functionName ?? '');
    };
    const dt = p.timeDeltas ?? [];
    const selfByNode = new Map<number, number>();
    p.samples?.forEach((id, i) => selfByNode.set(id, (selfByNode.get(id) ?? 0) + (dt[i] ?? 0)));
    const comp = new Map<string, number>();
    const fn = new Map<string, number>();
    let total = 0;
    let idle = 0;
    for (const [id, us] of selfByNode) {
      const n = byId.get(id);
      if (n === undefined) continue;
      const name = n.callFrame.functionName;
      if (name === '(idle)') {
        idle += us;
        continue;
      }
      total += us;
      const c = owner(id);
      comp.set(c, (comp.get(c) ?? 0) + us);
      const key = `[${owner(id)}] ${name || '(anon)'} ${n.callFrame.url.replace(/.*node_modules\//, '').replace(/.*dist\//, '')}:${n.callFrame.lineNumber}`;
      fn.set(key, (fn.get(key) ?? 0) + us);
    }
    const ok = f.rps * seconds;
    process.stdout.write(
      `busy ${(total / 1e3).toFixed(0)} ms (idle ${(idle / 1e3).toFixed(0)} ms), ${ok} ok, ${(total / ok).toFixed(1)} µs busy per answer\n`,
    );
    for (const [c, us] of [...comp].sort((a, b) => b[1] - a[1]).slice(0, 30))
      process.stdout.write(
        `${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / ok).toFixed(1).padStart(6)} µs  ${c}\n`,
      );
    const tableFile = path.join(root, 'bench', 'results', 'cpu-profile.json');
    const tables = await fs
      .readFile(tableFile, 'utf8')
      .then((t) => JSON.parse(t) as Record<string, unknown>)
      .catch(() => ({}) as Record<string, unknown>);
    tables[label] = {
      node: process.version,
      rate_rps: rate,
      seconds,
      busy_us_per_answer: Math.round((total / ok) * 10) / 10,
      components_us_per_answer: Object.fromEntries(
        [...comp].sort((a, b) => b[1] - a[1]).map(([c, us]) => [c, Math.round((us / ok) * 10) / 10]),
      ),
    };
    await fs.writeFile(tableFile, `${JSON.stringify(tables, null, 2)}\n`);
    process.stdout.write('--- functions\n');
    for (const [k, us] of [...fn].sort((a, b) => b[1] - a[1]).slice(0, 45))
      process.stdout.write(
        `${((100 * us) / total).toFixed(1).padStart(5)} %  ${(us / ok).toFixed(1).padStart(6)} µs  ${k}\n`,
      );
  } finally {
    await server.stop();
    await fs.rm(tmp, { recursive: true, force: true });
  }
}

void main();
