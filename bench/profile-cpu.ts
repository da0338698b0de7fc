/**
 * `node dist/bench/profile-cpu.js [seconds] [rate]`: a CPU profile of the service's app thread at a fixed rate
 * (the probe of bench/servers/probe.ts), printed as self time by component and by function (top 40), to find
 * where the CPU per decision goes. Writes the profile to bench/results/cpu-service.cpuprofile.gz.
 */
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { gzipSync } from 'node:zlib';
import { appRoot } from '../lib/config/app-root';
import { startServer } from './children';
import { openLoop } from './open-loop';
import { paymentBody } from './payment-body';
import { component, type CpuProfile } from './profile-stalls';

async function main(): Promise<void> {
  const seconds = Number(process.argv[2] ?? 10);
  const rate = Number(process.argv[3] ?? 400);
  const root = appRoot();
  const tmp = await fs.mkdtemp(path.join(os.tmpdir(), 'bench-profile-'));
  const server = await startServer(process.env['BENCH_SERVER'] ?? 'servers/service', {
    MODEL_DIR: path.join(root, 'models'),
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL: process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: 'bench:prof:',
    DECISION_LOG_DIR: tmp,
    OTEL_TRACES_EXPORTER: 'none',
    APPLICATIONINSIGHTS_CONNECTION_STRING: '',
  });
  try {
    await openLoop({ url: server.url, path: '/api/score', body: paymentBody, rate, durationSec: 3 });
    const file = path.join(tmp, 'p.cpuprofile');
    await fetch(`${server.url}/__bench/probe/start?file=${encodeURIComponent(file)}`).then((r) => r.text());
    const f = await openLoop({ url: server.url, path: '/api/score', body: paymentBody, rate, durationSec: seconds });
    await fetch(`${server.url}/__bench/probe/stop`).then((r) => r.text());
    const text = await fs.readFile(file, 'utf8');
    const p = JSON.parse(text) as CpuProfile;
    await fs.writeFile(path.join(root, 'bench', 'results', 'cpu-service.cpuprofile.gz'), gzipSync(text));
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
