// `npm run build`: a clean build (dist/ removed, then `tsc -p .` and `tsc -p console`, the console's static files copied), then dist/.build-stamp, dated to the moment the
// build started (a source saved while tsc ran is newer than the stamp, so the next `npm start` builds again).
// `--if-stale`: builds only when the sources changed since the last clean build, or none ran (see `stale`);
// `npm start`, `npm run bench:start` and the learning commands (dataset:export, model:train, backtest,
// learning:erase) build that way.
// Plain JavaScript on purpose: it must run before anything is compiled.
import { spawnSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { copyFileSync, readdirSync, readFileSync, rmSync, statSync, utimesSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
/** The stamp of the last successful clean build; its modification time is when that build started. */
export const STAMP = path.join(root, 'dist', '.build-stamp');
const SOURCES = ['lib', 'functions', 'local', 'scripts', 'test', 'bench', 'console'];
/** The console's static files, copied beside its compiled modules (dist/console). */
const CONSOLE_STATIC = ['index.html', 'console.css', 'lead.css'];
const CONFIG = ['tsconfig.json', 'package.json', 'package-lock.json'];

/** The `.ts` (and the console's `.html`, `.css`) files under `dir` (relative paths, skipping generated folders) and the newest modification time, ms. */
function scan(dir, files = []) {
  let newest = 0;
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (e.name !== 'node_modules' && e.name !== 'results' && e.name !== 'models')
        newest = Math.max(newest, scan(p, files).newest);
    } else if (/\.(ts|html|css)$/.test(e.name)) {
      newest = Math.max(newest, statSync(p).mtimeMs);
      files.push(path.relative(root, p));
    }
  }
  return { newest, files };
}

function mtimeOr(file, fallback) {
  try {
    return statSync(file).mtimeMs;
  } catch {
    return fallback;
  }
}

/**
 * The sources now: the newest modification time (ms) and a digest of the `.ts` file list (an added, deleted or
 * renamed file changes it).
 */
function sources() {
  const files = [];
  const newest = Math.max(
    ...SOURCES.map((d) => scan(path.join(root, d), files).newest),
    ...CONFIG.map((f) => mtimeOr(path.join(root, f), 0)),
  );
  const digest = createHash('sha256').update(files.sort().join('\n')).digest('hex');
  return { newest, digest };
}

/**
 * Whether dist/ must be rebuilt: no stamp; a source file or the build configuration modified after the last clean
 * build started; or a source file added, deleted or renamed since (the stamp holds a digest of the file list).
 */
export function stale() {
  let stamp;
  try {
    stamp = { mtime: statSync(STAMP).mtimeMs, text: readFileSync(STAMP, 'utf8') };
  } catch {
    return true;
  }
  const now = sources();
  return stamp.mtime <= now.newest || !stamp.text.includes(now.digest);
}

/** Removes dist/, compiles with tsc and writes the stamp. @returns tsc's exit status (0 on success). */
export function build() {
  const started = new Date();
  const { digest } = sources();
  rmSync(path.join(root, 'dist'), { recursive: true, force: true });
  const tsc = createRequire(import.meta.url).resolve('typescript/bin/tsc');
  const r = spawnSync(process.execPath, [tsc, '-p', root], { cwd: root, stdio: 'inherit' });
  if (r.status !== 0) return r.status ?? 1;
  // the analysts' console: browser modules (its own tsconfig: DOM, ES modules) and its static files
  const c = spawnSync(process.execPath, [tsc, '-p', path.join(root, 'console')], { cwd: root, stdio: 'inherit' });
  if (c.status !== 0) return c.status ?? 1;
  for (const f of CONSOLE_STATIC) copyFileSync(path.join(root, 'console', f), path.join(root, 'dist', 'console', f));
  writeFileSync(STAMP, `${started.toISOString()}\n${digest}\n`);
  utimesSync(STAMP, started, started);
  return 0;
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  if (process.argv.includes('--if-stale') && !stale()) process.exit(0);
  process.exit(build());
}
