/**
 * The test command itself (scripts/run-tests.mjs), run as `npm test` runs it, on fixture folders written here:
 * every verdict of many short files reaches the runner's summary (no `--test-force-exit`, which drops a file's
 * last verdicts on Linux: nodejs/node#64833), helper folders are not run, and the whole-run watchdog stops a run
 * whose file never exits, and a run whose tests wrote into the checkout's .data/ fails.
 */
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { exitOf } from '../support/child-process';

const ROOT = path.resolve(__dirname, '..', '..', '..');
const SCRIPT = path.join(ROOT, 'scripts', 'run-tests.mjs');

/** `# tests N` (TAP, Node 20/22 off a TTY) or `ℹ tests N` (spec): the runner's last summary value for `key`. */
function summary(output: string, key: string): number | undefined {
  const all = [...output.matchAll(new RegExp(`^(?:# |ℹ )${key} (\\d+)$`, 'gm'))];
  const last = all.at(-1);
  return last === undefined ? undefined : Number(last[1]);
}

/** Runs the test command on `folder` (bounded by `ms`) and returns its exit code and output. */
async function runTests(
  folder: string,
  env: Record<string, string>,
  ms: number,
): Promise<{ code: number | null; out: string }> {
  // Without the test runner's own marker, which would make the inner runner think it is nested and run nothing.
  const { NODE_TEST_CONTEXT: _nested, ...outer } = process.env;
  const child = spawn(process.execPath, [SCRIPT, folder], {
    env: { ...outer, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  child.stdout.on('data', (c: Buffer) => (out += c.toString()));
  child.stderr.on('data', (c: Buffer) => (out += c.toString()));
  const code = await exitOf(child, `scripts/run-tests.mjs on ${folder} to exit`, ms);
  return { code, out };
}

describe('the test command (scripts/run-tests.mjs)', () => {
  let dir = '';
  before(() => {
    dir = mkdtempSync(path.join(os.tmpdir(), 'run-tests-'));
  });
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('reports every verdict of many short files, and runs no helper folder', async () => {
    const FILES = 30;
    const TESTS = 25;
    const folder = path.join(dir, 'many');
    mkdirSync(path.join(folder, 'support'), { recursive: true });
    const name = 'a test name long enough to make each report frame a few hundred bytes '.repeat(3);
    for (let f = 0; f < FILES; f++) {
      const lines = ["const { test } = require('node:test');"];
      for (let t = 0; t < TESTS; t++) lines.push(`test('file ${f} test ${t} ${name}', () => {});`);
      writeFileSync(path.join(folder, `f${String(f).padStart(2, '0')}.test.js`), lines.join('\n'));
    }
    // A helper that would fail if it were run as a test file.
    writeFileSync(
      path.join(folder, 'support', 'helper.test.js'),
      "require('node:test').test('x', () => { throw new Error('helper run'); });",
    );

    const { code, out } = await runTests(folder, {}, 120_000);
    assert.equal(code, 0, out.slice(-3000));
    assert.match(out, new RegExp(`run-tests: ${FILES} test files`));
    assert.equal(summary(out, 'tests'), FILES * TESTS, `every verdict reaches the summary:\n${out.slice(-1500)}`);
    assert.equal(summary(out, 'pass'), FILES * TESTS);
  });

  it('stops a run whose file never exits after RUN_TIMEOUT_MS, and fails saying so', async () => {
    const folder = path.join(dir, 'hangs');
    mkdirSync(folder, { recursive: true });
    // The test passes, but the file keeps an interval running, so its process never ends on its own.
    writeFileSync(
      path.join(folder, 'open-handle.test.js'),
      "require('node:test').test('passes, leaves a timer', () => { setInterval(() => {}, 1000); });",
    );
    const { code, out } = await runTests(folder, { RUN_TIMEOUT_MS: '3000', TEST_TIMEOUT_MS: '600000' }, 60_000);
    assert.equal(code, 1, out.slice(-2000));
    assert.match(out, /had not ended after 3000 ms \(RUN_TIMEOUT_MS\)/);
  });

  it('refuses a timeout that is not a positive integer, naming the setting', async () => {
    const folder = path.join(dir, 'many');
    const { code, out } = await runTests(folder, { RUN_TIMEOUT_MS: '-5' }, 30_000);
    assert.equal(code, 2);
    assert.match(out, /RUN_TIMEOUT_MS must be a positive integer \(milliseconds\), got '-5'/);
  });
  it("fails the run when the tests wrote into the checkout's .data/, naming the file", async () => {
    const folder = path.join(dir, 'writes-data');
    mkdirSync(folder, { recursive: true });
    const probe = path.join(ROOT, '.data', `run-tests-probe-${process.pid}`, 'record.jsonl');
    writeFileSync(
      path.join(folder, 'writes.test.js'),
      [
        "const { test } = require('node:test');",
        "const fs = require('node:fs');",
        "const path = require('node:path');",
        'test("writes a decision record into the checkout", () => {',
        '  fs.mkdirSync(path.dirname(process.env.PROBE), { recursive: true });',
        "  fs.writeFileSync(process.env.PROBE, '{}');",
        '});',
      ].join('\n'),
    );
    try {
      const { code, out } = await runTests(folder, { PROBE: probe }, 60_000);
      assert.equal(code, 1, out);
      assert.match(out, /wrote 1 file\(s\) into the checkout's \.data\//);
      assert.ok(out.includes(path.join(`run-tests-probe-${process.pid}`, 'record.jsonl')), out);
    } finally {
      rmSync(path.dirname(probe), { recursive: true, force: true });
    }
  });
});
