/** What a result file records of the machine and the moment it was measured on (docs/benchmarks.md shows it). */
import * as os from 'node:os';

/** The 1-minute load average now, rounded (a bench reads it before it starts loading the machine). */
export function loadAverage(): number {
  return Math.round((os.loadavg()[0] ?? 0) * 100) / 100;
}

/**
 * CPU, cores, memory, platform, Node and onnxruntime versions, the date, and the 1-minute load average (at the end of
 * the run, which its own load raises; `loadavg_1m_before`, when given, before the run started).
 */
export function machine(loadBefore?: number): Record<string, unknown> {
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const ortVersion = (require('onnxruntime-node/package.json') as { version: string }).version;
  return {
    cpu: os.cpus()[0]?.model ?? 'unknown',
    cores: os.availableParallelism(),
    memory_gb: Math.round(os.totalmem() / 1024 ** 3),
    platform: `${os.platform()} ${os.release()}`,
    node: process.version,
    onnxruntime: ortVersion,
    date: new Date().toISOString(),
    // other processes on the cores: figures taken under a high load average are the machine's, not the code's
    loadavg_1m: loadAverage(),
    ...(loadBefore === undefined ? {} : { loadavg_1m_before: loadBefore }),
  };
}
