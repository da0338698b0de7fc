/**
 * `npm run bench [-- --quick]`: the main benchmark (bench/bench.ts), the decisioning benchmark
 * (bench/decisioning.ts), CPU per decision (bench/cpu.ts), signals (bench/signals.ts), capacity (bench/capacity.ts) and the case queue's
 * concurrent `next` (bench/cases-next.ts), each in its own
 * process with the same arguments (npm appends them to the last command of a script only).
 */
import { spawnSync } from 'node:child_process';
import * as path from 'node:path';

for (const script of ['bench.js', 'decisioning.js', 'cpu.js', 'signals.js', 'capacity.js', 'cases-next.js']) {
  const r = spawnSync(process.execPath, [path.join(__dirname, script), ...process.argv.slice(2)], { stdio: 'inherit' });
  if (r.status !== 0) process.exit(r.status ?? 1);
}
