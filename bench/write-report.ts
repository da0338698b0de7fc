/**
 * `npm run bench:report`: writes docs/benchmarks.md from the committed bench/results/*.json (bench/benchmarks-page.ts)
 * and the static methods text (bench/benchmarks-methods.md). Missing result files read "not measured".
 */
import { existsSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { benchmarksPage, type Results } from './benchmarks-page';

const ROOT = path.resolve(__dirname, '../..');
const dir = path.join(ROOT, 'bench', 'results');
const results: Record<string, unknown> = {};
if (existsSync(dir))
  for (const f of readdirSync(dir).filter((n) => n.endsWith('.json')))
    results[f] = JSON.parse(readFileSync(path.join(dir, f), 'utf8')) as unknown;
const methods = readFileSync(path.join(ROOT, 'bench', 'benchmarks-methods.md'), 'utf8');
const out = path.join(ROOT, 'docs', 'benchmarks.md');
writeFileSync(out, benchmarksPage(results as Results, methods));
process.stdout.write(
  `wrote ${path.relative(ROOT, out)} from ${Object.keys(results).length} result file(s): ${Object.keys(results).join(', ') || 'none'}\n`,
);
