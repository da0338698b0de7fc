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
 * A server that runs its functions in child processes (the local host with `FUNCTIONS_WORKER_PROCESS_COUNT` > 1)
 * is read with its live descendants: the process figure sums them all, the app-thread figure sums the main
 * threads of the server and of each descendant.
 *
 * Reads are synchronous and small (one short file each).
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';

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

/** Fields 3 onwards of `/proc/<pid>/stat` (the command name, field 2, is in parentheses and may hold spaces). */
function statFields(pid: number): string[] {
  const text = readFileSync(`/proc/${pid}/stat`, 'utf8');
  return text.slice(text.lastIndexOf(')') + 2).split(' ');
}

/** The whole process's user + system time, ns (fields 14 and 15 of `/proc/<pid>/stat`). */
export function processNs(pid: number): number {
  const rest = statFields(pid);
  const ticks = Number(rest[11]) + Number(rest[12]); // rest[0] is field 3 (state)
  if (!Number.isFinite(ticks)) throw new Error(`unreadable /proc/${pid}/stat`);
  return (ticks * 1e9) / CLK_TCK;
}

/** The live descendants of `pid` (children, their children, …), from every process's parent id. */
export function descendants(pid: number): number[] {
  const children = new Map<number, number[]>();
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const ppid = Number(statFields(Number(name))[1]);
      const list = children.get(ppid);
      if (list === undefined) children.set(ppid, [Number(name)]);
      else list.push(Number(name));
    } catch {
      // the process ended while the folder was read
    }
  }
  const out: number[] = [];
  const walk = (p: number): void => {
    for (const c of children.get(p) ?? []) {
      out.push(c);
      walk(c);
    }
  };
  walk(pid);
  return out;
}

/** Both readings of `pid` and its live descendants now (a descendant that ends meanwhile counts as 0). */
export function readCpu(pid: number): CpuReading {
  let mainNs = mainThreadNs(pid);
  let procNs = processNs(pid);
  for (const c of descendants(pid)) {
    try {
      mainNs += mainThreadNs(c);
      procNs += processNs(c);
    } catch {
      // ended meanwhile
    }
  }
  return { mainNs, processNs: procNs };
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
