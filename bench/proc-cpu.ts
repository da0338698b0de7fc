/**
 * CPU time of another process, read from Linux's `/proc` (the benchmark's servers are child processes):
 *
 * - the **app thread**: the process's main thread (task id = pid), where the local host runs the function
 *   modules, from `/proc/<pid>/task/<pid>/schedstat` (time on CPU, ns: the scheduler's own accounting, not
 *   rounded to clock ticks);
 * - the **whole process**: every thread, including threads that have ended (the inference workers, the
 *   host's HTTP front, libuv's pool, V8's GC helpers), from `/proc/<pid>/stat` (`utime + stime`, clock ticks
 *   of 10 ms, converted to ns).
 *
 * Reads are synchronous and small (one short file each).
 * @module
 */
import { readFileSync } from 'node:fs';

/** Clock ticks per second of `/proc/<pid>/stat` (`getconf CLK_TCK`, 100 on Linux x86-64). */
const CLK_TCK = 100;

/** A CPU reading of one process, ns. */
export interface CpuReading {
  /** Time on CPU of the main (app) thread, ns. */
  readonly mainNs: number;
  /** User + system time of the whole process, ns (10 ms resolution). */
  readonly processNs: number;
}

/** The main thread's time on CPU, ns (first field of `schedstat`). */
export function mainThreadNs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/task/${pid}/schedstat`, 'utf8');
  const ns = Number(text.split(' ')[0]);
  if (!Number.isFinite(ns)) throw new Error(`unreadable /proc/${pid}/task/${pid}/schedstat: ${text}`);
  return ns;
}

/** The whole process's user + system time, ns (fields 14 and 15 of `/proc/<pid>/stat`). */
export function processNs(pid: number): number {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  // the command name (field 2) is in parentheses and may hold spaces: count fields after the last ')'
  const rest = text.slice(text.lastIndexOf(')') + 2).split(' ');
  const ticks = Number(rest[11]) + Number(rest[12]); // rest[0] is field 3 (state)
  if (!Number.isFinite(ticks)) throw new Error(`unreadable /proc/${pid}/stat`);
  return (ticks * 1e9) / CLK_TCK;
}

/** Both readings of `pid` now. */
export function readCpu(pid: number): CpuReading {
  return { mainNs: mainThreadNs(pid), processNs: processNs(pid) };
}

/** µs of CPU per unit (e.g. per answered request) between two readings: main thread and process, 1 decimal. */
export function perUnitUs(
  before: CpuReading,
  after: CpuReading,
  units: number,
): { readonly main_us: number; readonly process_us: number } {
  const per = (ns: number): number => Math.round((ns / 1e3 / Math.max(1, units)) * 10) / 10;
  return { main_us: per(after.mainNs - before.mainNs), process_us: per(after.processNs - before.processNs) };
}
