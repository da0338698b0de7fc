import assert from 'node:assert/strict';

/**
 * The one bounded poll of the tests: until `check` passes, waiting for real I/O (Azurite, Redis pub/sub, workers,
 * child processes), never for logic. Fails naming `what` and showing the last value.
 * @param ms how long to wait at most, ms. Default 30 s.
 * @param intervalMs the pause between probes, ms. Default 50.
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  check: (v: T) => boolean,
  what: string,
  ms = 30_000,
  intervalMs = 50,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (check(v)) return v;
    if (Date.now() > end)
      assert.fail(`timed out after ${ms} ms waiting for ${what}: ${JSON.stringify(v).slice(0, 1500)}`);
    await new Promise((r) => setTimeout(r, intervalMs));
  }
}

/**
 * Awaits `promise` (an event the test waits for), failing after `ms` with a message naming `what`.
 * @param ms bound, ms. Default 30 s.
 */
export async function within<T>(promise: Promise<T>, what: string, ms = 30_000): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    clearTimeout(timer);
  }
}
