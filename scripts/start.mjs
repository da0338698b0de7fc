// `npm start`: builds only when needed, then runs the local host (dist/local/main.js).
// The build is skipped when dist/.build-stamp (written here after a successful clean build) is newer than
// every source file and folder (a deleted file changes its folder's time) and the build configuration.
// Otherwise it runs `npm run build` (clean + tsc: never stale outputs), as a fresh clone does once.
// Plain JavaScript on purpose: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const stamp = path.join(root, 'dist', '.build-stamp');
const SOURCES = ['lib', 'functions', 'local', 'scripts', 'test', 'bench'];
const CONFIG = ['tsconfig.json', 'package.json', 'package-lock.json'];

/** Newest modification time (ms) of `.ts` files and folders under `dir` (skips generated folders). */
function newest(dir) {
  let t = statSync(dir).mtimeMs;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'results' && e.name !== 'models') t = Math.max(t, newest(p));
    } else if (e.name.endsWith('.ts')) t = Math.max(t, statSync(p).mtimeMs);
  }
  return t;
}

function builtAt() {
  try {
    return statSync(stamp).mtimeMs;
  } catch {
    return -1;
  }
}

const sources = Math.max(
  ...SOURCES.map((d) => newest(path.join(root, d))),
  ...CONFIG.map((f) => {
    try {
      return statSync(path.join(root, f)).mtimeMs;
    } catch {
      return 0;
    }
  }),
);
if (builtAt() <= sources) {
  process.stderr.write('npm start: sources changed since the last build (or never built): building\n');
  const npm = process.platform === 'win32' ? 'npm.cmd' : 'npm';
  const build = spawnSync(npm, ['run', '--silent', 'build'], { cwd: root, stdio: 'inherit' });
  if (build.status !== 0) process.exit(build.status ?? 1);
  writeFileSync(stamp, `${new Date().toISOString()}\n`);
}
// the host in this process (no second node start): CommonJS output, loaded from ESM by path
await import(pathToFileURL(path.join(root, 'dist', 'local', 'main.js')).href);
