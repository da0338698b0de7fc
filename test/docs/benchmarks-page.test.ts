/**
 * docs/benchmarks.md is generated from result files (`npm run bench:report`, run here as a command on result files
 * of the test's own): each target is judged from its file, a missing file reads "not measured".
 */
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';

const REPORT = path.resolve(__dirname, '../../bench/write-report.js');
const work = mkdtempSync(path.join(tmpdir(), 'bench-page-'));
after(() => rmSync(work, { recursive: true, force: true }));
let runs = 0;

/** The page the report command writes from these result files and methods text. */
function page(results: Record<string, unknown>, methods: string): string {
  const dir = path.join(work, `run-${++runs}`);
  execFileSync('mkdir', ['-p', dir]);
  for (const [f, v] of Object.entries(results)) writeFileSync(path.join(dir, f), JSON.stringify(v));
  writeFileSync(path.join(dir, 'methods.md'), methods);
  const out = path.join(dir, 'page.md');
  execFileSync(process.execPath, [REPORT, '--results', dir, '--methods', path.join(dir, 'methods.md'), '--out', out], {
    timeout: 30_000,
  });
  return readFileSync(out, 'utf8');
}

const row = (p: string, at: string): string => p.split('\n').find((l) => l.includes(`\`${at}\``)) ?? '';

/** The rows of the page's targets table. */
const targetRows = (p: string): string[] =>
  (p.split('## Targets')[1]?.split('\n## ')[0] ?? '').split('\n').filter((l) => l.startsWith('| ') && l.includes('`'));

describe('benchmarks page', () => {
  it('reads "not measured" for every target and run when no result file exists', () => {
    const p = page({}, '## Methods\n');
    const rows = targetRows(p);
    assert.ok(rows.length >= 20, `the targets table lists the targets (${rows.length} rows)`);
    for (const r of rows) assert.match(r, /not measured \| not measured \|$/, r);
    assert.match(p, /\| `bench\.json` \| `npm run bench` \| .* \| not measured \|/);
    assert.ok(p.trimEnd().endsWith('## Methods'), 'the static methods text closes the page');
  });

  it('judges each figure against its target and shows the machine, Node version and date of the run', () => {
    const bench = {
      machine: { cpu: 'Test CPU', cores: 2, node: 'v20.1.0', date: '2030-01-02T03:04:05.000Z' },
      small: {
        service: { rps: 900, p50_ms: 3, p99_ms: 9, loop_lag_p99_ms: 4, non2xx: 0 },
        ratios: { service_vs_naive_functions: 1.2 },
      },
    };
    const cpu = { cpu: { per_decision: { main_ratio: 1.3 } } };
    const swap = { requests: { failed: 0 }, latency_ms: { ratio: 2.5 }, targets: { rss_growth_within_2x_model: true } };
    const p = page({ 'bench.json': bench, 'swap.json': swap, 'cpu.json': cpu }, '');
    assert.match(row(p, 'small.ratios.service_vs_naive_functions'), /\| ≥ 1 \| 1\.2 \| met \|$/);
    assert.match(row(p, 'cpu.per_decision.main_ratio'), /\| ≤ 1\.15 \| 1\.3 \| \*\*missed\*\* \|$/);
    assert.match(row(p, 'heavy.ratios.service_vs_naive_functions'), /\| absent \| no figure \|$/);
    assert.match(row(p, 'requests.failed'), /\| = 0 \| 0 \| met \|$/);
    assert.match(row(p, 'latency_ms.ratio'), /\| ≤ 2 \| 2\.5 \| \*\*missed\*\* \|$/);
    assert.match(row(p, 'targets.rss_growth_within_2x_model'), /\| = true \| true \| met \|$/);
    assert.match(row(p, 'warm.ready_ms.median'), /not measured \| not measured \|$/);
    assert.match(p, /\| `bench\.json` \| .* \| 2030-01-02T03:04:05\.000Z \| Test CPU, 2 cores \| v20\.1\.0 \|/);
    assert.match(p, /\| small \| service \| 900 \| 3 \| 9 \| 4 \| 0 \|/);
  });

  it('shows the rounds beside a figure measured over rounds, and says when they fall on both sides of the goal', () => {
    const cpu = {
      cpu: {
        per_decision: {
          main_ratio: 1.12,
          main_ratio_spread: { median: 1.12, min: 1.1, max: 1.14, rounds: [1.1, 1.12, 1.14] },
        },
        marginal: { rules: 0.05, rules_spread: { median: 0.05, min: 0.01, max: 0.2, rounds: [0.2, 0.01, 0.05] } },
      },
    };
    const p = page({ 'cpu.json': cpu }, '');
    assert.match(row(p, 'cpu.per_decision.main_ratio'), /\| ≤ 1\.15 \| 1\.12 \(rounds 1\.1–1\.14\) \| met \|$/);
    assert.match(
      row(p, 'cpu.marginal.rules'),
      /\| ≤ 0\.08 \| 0\.05 \(rounds 0\.01–0\.2\) \| met \(rounds on both sides\) \|$/,
    );
    assert.match(row(p, 'cpu.marginal.decision_log'), /\| absent \| no figure \|$/);
  });

  it('reads a figure at its dot path and judges a value of the wrong type as no figure', () => {
    const p = page({ 'cpu.json': { cpu: { per_decision: { main_ratio: 'fast' } } } }, '');
    assert.doesNotMatch(row(p, 'cpu.per_decision.main_ratio'), /\| met \|$|missed/);
  });

  it('the committed page is what the command writes from the committed results', () => {
    const root = path.resolve(__dirname, '../../..');
    const p = page({}, '');
    assert.ok(p.length > 0);
    const committed = readFileSync(path.join(root, 'docs', 'benchmarks.md'), 'utf8');
    const out = path.join(work, 'current.md');
    execFileSync(process.execPath, [REPORT, '--out', out], { timeout: 30_000 });
    assert.equal(readFileSync(out, 'utf8'), committed, 'run `npm run bench:report` after changing bench/results');
  });
});
