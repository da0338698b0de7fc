// `npm test` / `npm run test:infra`: runs the compiled test files with Node's test runner, on Node 22 and 24.
//
//   node scripts/run-tests.mjs [folder-or-file ...]      (default: dist/test)
//
// The test files are listed here and passed to `node --test` one by one, because the runner itself cannot be given
// a folder portably: from Node 21 on a folder argument is read as a file path or glob and fails with "Cannot find
// module" (Node 20 walked it). So the file list is the same on every Node: every `*.test.js` under the given
// folders, except under `support/` and `fixtures/` folders (helpers, never run as tests). The number of files is printed before the run; the runner's own summary (`# tests N` in the
// TAP reporter, `ℹ tests N` in the spec reporter) closes the run.
//
// Timeouts, so that a hung test fails instead of hanging the run. `--test-timeout` means different things:
// - Node 24 and later apply it to each test (nodejs/node#57672): a hung test fails naming itself, and the other
//   tests of its file still run.
// - Node 22 applies it to each test file as a whole: the file's process is stopped and the file is reported
//   as timed out, by name. So the limit there is a per-file one, above the slowest file.
// TEST_TIMEOUT_MS overrides the value passed. Above both, a watchdog bounds the whole run (RUN_TIMEOUT_MS, default
// 30 min): a file whose test left a timer or socket open never exits on Node 24, so after the per-test failure has
// been printed the watchdog stops the runner and exits 1, saying what it waited for.
// No `--test-force-exit`: with process isolation it can drop a file's last verdicts on Linux (the child exits with
// its report still in the pipe to the runner) and the run still exits 0 with fewer tests (nodejs/node#64833). CI
// saw it: the Node 24 pass counted 679 tests, 13 short of the 692 that ran. test/unit/run-tests.test.ts checks the
// count on many short files and the watchdog on a file that never exits.
// Files run one at a time (the machine has 2 cores, and the tests share Redis and start servers).
// Plain JavaScript on purpose: it runs before anything else, with no dependency.
import { spawn } from 'node:child_process';
import { mkdtempSync, readdirSync, rmSync, statSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** Per-test limit (Node 24+). The slowest test took 71 s on a loaded 2-core machine. */
const TEST_TIMEOUT_MS = 180_000;
/** Per-file limit (Node 22, which applies --test-timeout to whole files). The slowest file took under 80 s. */
const FILE_TIMEOUT_MS = 600_000;
/** Bound on the whole run, above the slowest full run (under 10 min on a loaded 2-core machine). */
const RUN_TIMEOUT_MS = 1_800_000;
/** Whether this Node applies --test-timeout to each test rather than to each file. */
export const perTestTimeout = (version = process.versions.node) => Number(version.split('.')[0]) >= 24;
/** Folders whose files are helpers for the tests, never tests themselves. */
const NOT_TESTS = new Set(['support', 'fixtures', 'node_modules']);

/** Every `*.test.js` under `dir`, skipping helper folders; sorted, so the order is the same everywhere. */
export function testFiles(dir, out = []) {
  for (const e of readdirSync(dir, { withFileTypes: true })) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) {
      if (!NOT_TESTS.has(e.name)) testFiles(p, out);
    } else if (e.isFile() && e.name.endsWith('.test.js')) {
      out.push(p);
    }
  }
  return out.sort();
}

/** The files under `dir` (relative paths), or none when it does not exist. */
export function filesUnder(dir, base = dir, out = []) {
  let entries;
  try {
    entries = readdirSync(dir, { withFileTypes: true });
  } catch {
    return out;
  }
  for (const e of entries) {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) filesUnder(p, base, out);
    else out.push(path.relative(base, p));
  }
  return out;
}

/** A positive integer of milliseconds from the environment variable `name`, or `fallback` when unset. */
function millisFromEnv(name, fallback) {
  const raw = process.env[name];
  if (raw === undefined || raw === '') return fallback;
  const n = Number(raw);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`run-tests: ${name} must be a positive integer (milliseconds), got '${raw}'`);
    process.exit(2);
  }
  return n;
}

function main() {
  const targets = process.argv.slice(2);
  if (targets.length === 0) targets.push('dist/test');
  const files = [];
  for (const t of targets) {
    const abs = path.resolve(root, t);
    let st;
    try {
      st = statSync(abs);
    } catch {
      console.error(`run-tests: ${t} does not exist (run \`npm run build\` first)`);
      process.exit(2);
    }
    if (st.isDirectory()) testFiles(abs, files);
    else files.push(abs);
  }
  const unique = [...new Set(files)].map((f) => path.relative(root, f));
  if (unique.length === 0) {
    console.error(`run-tests: no *.test.js file under ${targets.join(', ')} (run \`npm run build\` first)`);
    process.exit(2);
  }
  const timeout = millisFromEnv('TEST_TIMEOUT_MS', perTestTimeout() ? TEST_TIMEOUT_MS : FILE_TIMEOUT_MS);
  const runTimeout = millisFromEnv('RUN_TIMEOUT_MS', RUN_TIMEOUT_MS);
  console.log(
    `run-tests: ${unique.length} test files under ${targets.join(', ')} on Node ${process.version}, ` +
      `--test-timeout=${timeout} (per ${perTestTimeout() ? 'test' : 'file'}), whole run within ${runTimeout} ms`,
  );
  const args = ['--test', '--test-concurrency=1', `--test-timeout=${timeout}`, ...unique];
  // Decision records of the engines the tests start go to a folder of this run, not to the checkout's
  // .data/decisions (a test that checks the log sets its own DECISION_LOG_DIR).
  const decisions = mkdtempSync(path.join(os.tmpdir(), 'test-decisions-'));
  // The embedded case database of the hosts the tests start (npm start uses PGlite) goes there too.
  const env = {
    ...process.env,
    DECISION_LOG_DIR: process.env.DECISION_LOG_DIR || decisions,
    PGLITE_DIR: process.env.PGLITE_DIR || path.join(decisions, 'pglite'),
  };
  const removeDecisions = () => rmSync(decisions, { recursive: true, force: true });
  // Tests never write into the checkout: the run fails if the checkout's .data/ gained files (a test that built
  // its config without a temporary DECISION_LOG_DIR, see test/support/config.ts).
  const dataDir = path.join(root, '.data');
  const dataBefore = new Set(filesUnder(dataDir));
  // Its own process group, so that the watchdog stops the runner and the file processes it started together.
  const child = spawn(process.execPath, args, { cwd: root, env, stdio: 'inherit', detached: true });
  const signalGroup = (sig) => {
    try {
      process.kill(-child.pid, sig);
    } catch {
      // the group has already exited
    }
  };
  for (const sig of ['SIGINT', 'SIGTERM']) process.on(sig, () => signalGroup(sig));
  const watchdog = setTimeout(() => {
    console.error(
      `run-tests: the test runner had not ended after ${runTimeout} ms (RUN_TIMEOUT_MS); stopping it. ` +
        'A test that timed out above, or a file that left a timer or socket open, kept it running.',
    );
    signalGroup('SIGKILL');
    removeDecisions();
    process.exit(1);
  }, runTimeout);
  child.on('exit', (code, signal) => {
    clearTimeout(watchdog);
    removeDecisions();
    if (signal !== null) {
      console.error(`run-tests: the test runner was stopped by ${signal}`);
      process.exit(1);
    }
    const gained = filesUnder(dataDir).filter((f) => !dataBefore.has(f));
    if (gained.length > 0) {
      console.error(
        `run-tests: the tests wrote ${gained.length} file(s) into the checkout's .data/ (tests must use a ` +
          `temporary folder, e.g. testConfig in test/support/config.ts): ${gained.slice(0, 10).join(', ')}`,
      );
      process.exit(1);
    }
    process.exit(code ?? 1);
  });
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
