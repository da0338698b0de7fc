/**
 * Tests import nothing from `bench/` or `scripts/`: what a test shares with them lives in `lib/` (the offline commands,
 * the generated models) or under `test/support` (the protocol peers); a command or a report generator is run as a
 * command (`node dist/bench/write-report.js`), as a person runs it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { filesUnder } from '../support/files-under';

const ROOT = path.resolve(__dirname, '../../..');
/** A static import or export, a dynamic import or a require of a module path. */
const SPECIFIER = /(?:\bfrom\s+|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"]([^'"]+)['"]/gm;

/** The module paths a source file imports that resolve into `bench/` or `scripts/`. */
export function importsOutside(file: string, text: string): string[] {
  const bad: string[] = [];
  for (const m of text.matchAll(SPECIFIER)) {
    const spec = m[1] ?? '';
    if (!spec.startsWith('.')) continue;
    const target = path.relative(ROOT, path.resolve(path.dirname(file), spec));
    if (/^(bench|scripts)(\/|$)/.test(target)) bad.push(spec);
  }
  return bad;
}

describe('test imports', () => {
  it('finds an import of bench/ or scripts/ when there is one (the check can fail)', () => {
    const file = path.join(ROOT, 'test', 'x', 'y.test.ts');
    assert.deepEqual(importsOutside(file, `import { a } from '../../bench/targets';\n`), ['../../bench/targets']);
    assert.deepEqual(importsOutside(file, `const m = await import('../../scripts/x');\n`), ['../../scripts/x']);
    assert.deepEqual(importsOutside(file, `import { a } from '../../lib/x';\n`), []);
  });

  it('no test file imports bench/ or scripts/', () => {
    // this file's own samples are the only imports of bench/ or scripts/ it holds
    const self = path.join(ROOT, 'test', 'unit', 'test-imports.test.ts');
    const files = filesUnder(path.join(ROOT, 'test'), (f) => f.endsWith('.ts')).filter((f) => f !== self);
    assert.ok(files.length > 100, `the walk finds the test files (${files.length})`);
    const bad = files.flatMap((f) =>
      importsOutside(f, readFileSync(f, 'utf8')).map((spec) => `${path.relative(ROOT, f)} imports ${spec}`),
    );
    assert.deepEqual(bad, []);
  });
});
