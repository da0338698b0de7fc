// `npm start`: builds only when needed, then runs the local host (dist/local/main.js) in this process.
// The build is skipped when dist/.build-stamp (written by every clean build, `npm run build` included) is newer
// than every source file and folder and the build configuration (scripts/build.mjs). Otherwise it runs the clean
// build first, as a fresh clone does once: never stale outputs.
// Plain JavaScript on purpose: it must run before anything is compiled.
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { build, stale } from './build.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
if (stale()) {
  process.stderr.write('npm start: sources changed since the last build (or never built): building\n');
  const status = build();
  if (status !== 0) process.exit(status);
}
// `kill <npm's pid>` ends npm and its shell, but the shell does not pass the signal on: when the parent is gone,
// stop gracefully as on SIGTERM instead of serving on as an orphan.
const parent = process.ppid;
const orphaned = setInterval(() => {
  if (process.ppid === parent) return;
  clearInterval(orphaned);
  process.kill(process.pid, 'SIGTERM');
}, 500).unref();
// the host in this process (no second node start): CommonJS output, loaded from ESM by path
await import(pathToFileURL(path.join(root, 'dist', 'local', 'main.js')).href);
