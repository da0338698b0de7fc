import assert from 'node:assert/strict';

/**
 * Polls (bounded) until `check` passes: waiting for real I/O (Azurite, Redis pub/sub, workers), never for logic.
 * @param ms how long to wait at most, ms. Default 30 s.
 */
export async function eventually<T>(
  probe: () => Promise<T>,
  check: (v: T) => boolean,
  what: string,
  ms = 30_000,
): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await probe();
    if (check(v)) return v;
    if (Date.now() > end) assert.fail(`timed out waiting for ${what}: ${JSON.stringify(v).slice(0, 1500)}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}
