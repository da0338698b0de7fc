/**
 * `npm start`: serves the app's registered functions on http://127.0.0.1:7071/api, like `func start`,
 * on embedded defaults (bundled model, in-process stores). Reads `local.settings.json` Values when present,
 * as `func start` does; real environment variables win.
 */
import { promises as fs, existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { LocalHost } from './host';

const ROOT = path.resolve(__dirname, '../..');

function loadLocalSettings(): void {
  const file = path.join(ROOT, 'local.settings.json');
  if (!existsSync(file)) return;
  const values = (JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, string> }).Values ?? {};
  for (const [k, v] of Object.entries(values)) if (process.env[k] === undefined) process.env[k] = String(v);
}

/** The compiled function modules named by package.json `main` (a `dir/*.js` glob, as the Functions host reads it). */
async function appModules(): Promise<string[]> {
  const main = (JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as { main: string }).main;
  const dir = path.join(ROOT, path.dirname(main));
  const suffix = path.basename(main).replace(/^\*/, '');
  return (await fs.readdir(dir)).filter((f) => f.endsWith(suffix)).sort().map((f) => path.join(dir, f));
}

async function main(): Promise<void> {
  loadLocalSettings();
  const port = Number(process.env['PORT'] ?? 7071);
  const host = await LocalHost.create({ port, appModules: await appModules(), log: (line) => console.log(line) });
  console.log(`Listening on ${host.url}/${host.routePrefix} (Ctrl+C to stop)`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down gracefully`);
    host.dispose().then(
      () => process.exit(0),
      (err: unknown) => {
        console.error('shutdown failed', err);
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error('local host failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
