/**
 * `npm run bench:report`: writes docs/benchmarks.md from the committed bench/results/*.json (bench/benchmarks-page.ts)
 * and the static methods text (bench/benchmarks-methods.md). Missing result files read "not measured".
 * `--results <dir>`, `--methods <file>` and `--out <file>` read and write elsewhere (the docs test does).
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { parseArgs } from 'node:util';
import { benchmarksPage, type Results } from './benchmarks-page';

const ROOT = path.resolve(__dirname, '../..');
const { values } = parseArgs({
  options: { results: { type: 'string' }, methods: { type: 'string' }, out: { type: 'string' } },
  strict: true,
});
const dir = path.resolve(values.results ?? path.join(ROOT, 'bench', 'results'));
const results: Record<string, unknown> = {};
if (existsSync(dir))
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json')))
    results[f] = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as unknown;
const methods = readFileSync(path.resolve(values.methods ?? path.join(ROOT, 'bench', 'benchmarks-methods.md')), 'utf8');
const out = path.resolve(values.out ?? path.join(ROOT, 'docs', 'benchmarks.md'));
writeFileSync(out, benchmarksPage(results as Results, methods));
process.stdout.write(
  `wrote ${path.relative(ROOT, out)} from ${Object.keys(results).length} result file(s): ${Object.keys(results).join(', ') || 'none'}\n`,
);
