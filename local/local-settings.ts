/**
 * Reads `local.settings.json` Values into the environment when present, as `func start` does (real
 * environment variables win). Imported first by `main.ts`, so the telemetry preload sees them too.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';

const file = path.join(path.resolve(__dirname, '../..'), 'local.settings.json');
if (existsSync(file)) {
  const values = (JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, string> }).Values ?? {};
  for (const [k, v] of Object.entries(values)) if (process.env[k] === undefined) process.env[k] = String(v);
}
