import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from '../../local/host';

/** Compiled function modules (dist/functions/*.js), as package.json `main` names them. */
export async function functionModules(): Promise<string[]> {
  const dir = path.resolve(__dirname, '../../functions');
  return (await fs.readdir(dir)).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));
}

/**
 * Starts the local host on a free port with the app's real functions. Set `process.env` before calling:
 * the engine reads its configuration once, on first use.
 */
export async function startHost(): Promise<LocalHost> {
  return LocalHost.create({ port: 0, appModules: await functionModules(), log: () => undefined });
}
