/** docs/benchmarks.md is generated from result files: each target is judged from its file, a missing file reads "not measured". */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { benchmarksPage } from '../../bench/benchmarks-page';
import { meets, TARGETS, valueAt } from '../../bench/targets';

const row = (page: string, path: string): string => page.split('\n').find((l) => l.includes(`\`${path}\``)) ?? '';

describe('benchmarks page', () => {
  it('reads "not measured" for every target and run when no result file exists', () => {
    const page = benchmarksPage({}, '## Methods\n');
    for (const t of TARGETS) assert.match(row(page, t.path), /not measured \| not measured \|$/, t.path);
    assert.match(page, /\| `bench\.json` \| `npm run bench` \| .* \| not measured \|/);
    assert.ok(page.trimEnd().endsWith('## Methods'), 'the static methods text closes the page');
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
    const page = benchmarksPage({ 'bench.json': bench, 'swap.json': swap, 'cpu.json': cpu }, '');
    assert.match(row(page, 'small.ratios.service_vs_naive_functions'), /\| ≥ 1 \| 1\.2 \| met \|$/);
    assert.match(row(page, 'cpu.per_decision.main_ratio'), /\| ≤ 1\.15 \| 1\.3 \| \*\*missed\*\* \|$/);
    assert.match(row(page, 'heavy.ratios.service_vs_naive_functions'), /\| absent \| no figure \|$/);
    assert.match(row(page, 'requests.failed'), /\| = 0 \| 0 \| met \|$/);
    assert.match(row(page, 'latency_ms.ratio'), /\| ≤ 2 \| 2\.5 \| \*\*missed\*\* \|$/);
    assert.match(row(page, 'targets.rss_growth_within_2x_model'), /\| = true \| true \| met \|$/);
    assert.match(row(page, 'warm.ready_ms.median'), /not measured \| not measured \|$/);
    assert.match(page, /\| `bench\.json` \| .* \| 2030-01-02T03:04:05\.000Z \| Test CPU, 2 cores \| v20\.1\.0 \|/);
    assert.match(page, /\| small \| service \| 900 \| 3 \| 9 \| 4 \| 0 \|/);
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
    const page = benchmarksPage({ 'cpu.json': cpu }, '');
    assert.match(row(page, 'cpu.per_decision.main_ratio'), /\| ≤ 1\.15 \| 1\.12 \(rounds 1\.1–1\.14\) \| met \|$/);
    assert.match(
      row(page, 'cpu.marginal.rules'),
      /\| ≤ 0\.08 \| 0\.05 \(rounds 0\.01–0\.2\) \| met \(rounds on both sides\) \|$/,
    );
    assert.match(row(page, 'cpu.marginal.decision_log'), /\| absent \| no figure \|$/);
  });

  it('reads figures by dot path, array indices included, and compares both ways', () => {
    assert.equal(valueAt({ a: { b: [{ c: 7 }] } }, 'a.b.0.c'), 7);
    assert.equal(valueAt({ a: 1 }, 'a.b'), undefined);
    const t = TARGETS.find((x) => x.comparison === '<=');
    assert.ok(t !== undefined && typeof t.goal === 'number');
    assert.equal(meets(t, t.goal), true);
    assert.equal(meets(t, t.goal + 1), false);
    assert.equal(meets(t, 'fast'), undefined);
  });
});
