import { createHash } from 'node:crypto';
import type { Redis } from 'ioredis';

const shas = new Map<string, string>();

/**
 * Runs a Lua script by `EVALSHA`, falling back to `EVAL` (which also loads it) when the server does not
 * know it yet (`NOSCRIPT`, e.g. after a restart).
 */
export async function runScript(
  client: Redis,
  lua: string,
  keys: readonly string[],
  args: readonly (string | number | Buffer)[],
): Promise<unknown> {
  let sha = shas.get(lua);
  if (sha === undefined) shas.set(lua, (sha = createHash('sha1').update(lua).digest('hex')));
  try {
    return await client.evalsha(sha, keys.length, ...keys, ...args);
  } catch (err) {
    if (!(err instanceof Error) || !err.message.startsWith('NOSCRIPT')) throw err;
    return client.eval(lua, keys.length, ...keys, ...args);
  }
}
