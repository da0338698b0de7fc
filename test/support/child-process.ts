import type { ChildProcess } from 'node:child_process';
import { within } from './eventually';

const hasExited = (child: ChildProcess): boolean => child.exitCode !== null || child.signalCode !== null;

/**
 * Waits (bounded) for `child` to exit and returns its exit code (null when a signal ended it). Resolves at
 * once if it has already exited. After `ms` it kills the child (SIGKILL, so no process outlives the test)
 * and fails naming `what`.
 * @param ms bound, ms. Default 30 s.
 */
export async function exitOf(child: ChildProcess, what: string, ms = 30_000): Promise<number | null> {
  if (hasExited(child)) return child.exitCode;
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  try {
    return await within(exited, what, ms);
  } catch (err) {
    child.kill('SIGKILL');
    throw err;
  }
}

/**
 * Stops `child` if it still runs: SIGTERM, then waits (bounded, see {@link exitOf}) for it to exit.
 * @param ms bound, ms. Default 30 s.
 */
export async function stopChild(child: ChildProcess, what: string, ms = 30_000): Promise<number | null> {
  if (!hasExited(child)) child.kill('SIGTERM');
  return exitOf(child, what, ms);
}

/**
 * Waits (bounded) until `output()` (what the test collects from the child's stdout and stderr) matches
 * `pattern`, checking on each chunk the child prints (register the collecting listeners before calling). Fails naming `what`, with the output so far, after `ms`
 * or when the child exits first. Leaves the child running either way: the caller stops it.
 * @returns the first capture group of `pattern`, or the whole match if it has none.
 * @param ms bound, ms. Default 60 s.
 */
export async function outputMatching(
  child: ChildProcess,
  output: () => string,
  pattern: RegExp,
  what: string,
  ms = 60_000,
): Promise<string> {
  let onData = (): void => undefined;
  let onExit = (): void => undefined;
  const matched = new Promise<string>((resolve, reject) => {
    onData = () => {
      const m = pattern.exec(output());
      if (m !== null) resolve(m[1] ?? m[0]);
    };
    onExit = () => reject(new Error(`the child exited (${child.exitCode ?? child.signalCode}) before ${what}`));
    child.stdout?.on('data', onData);
    child.stderr?.on('data', onData);
    child.once('exit', onExit);
    onData();
    if (hasExited(child)) onExit();
  });
  try {
    return await within(matched, what, ms);
  } catch (err) {
    throw new Error(`${(err as Error).message}; output so far:\n${output().slice(-4000)}`);
  } finally {
    child.stdout?.off('data', onData);
    child.stderr?.off('data', onData);
    child.off('exit', onExit);
  }
}
