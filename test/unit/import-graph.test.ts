/**
 * House style: no import cycles among the service's modules (`lib`, `functions`, `local`). Builds the graph
 * of relative imports from the TypeScript sources (type-only imports included: a cycle of types still ties
 * the modules together) and fails naming every cycle it finds. The finder itself is checked on small graphs.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { filesUnder } from '../support/files-under';

const ROOT = path.resolve(__dirname, '../../..');
const FOLDERS = ['lib', 'functions', 'local'];

/** Every `.ts` source file (not `.d.ts`) under `dir`, recursively. */
const sources = (dir: string): string[] => filesUnder(dir, (n) => n.endsWith('.ts') && !n.endsWith('.d.ts'));

const IMPORT = /(?:\bfrom\s*|\bimport\s*\(\s*|\brequire\s*\(\s*|^\s*import\s+)['"](\.{1,2}\/[^'"]*)['"]/gm;

/** The relative modules `file` imports, resolved to files of `known`. */
function importsOf(file: string, text: string, known: ReadonlySet<string>): string[] {
  const out = new Set<string>();
  for (const m of text.matchAll(IMPORT)) {
    const target = path.resolve(path.dirname(file), m[1] as string);
    for (const candidate of [`${target}.ts`, path.join(target, 'index.ts'), target])
      if (known.has(candidate)) {
        out.add(candidate);
        break;
      }
  }
  return [...out];
}

/** The strongly connected components of more than one node, or with a self-loop (Tarjan). */
function cycles(graph: ReadonlyMap<string, readonly string[]>): string[][] {
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const stack: string[] = [];
  const onStack = new Set<string>();
  const found: string[][] = [];
  let next = 0;
  const visit = (v: string): void => {
    index.set(v, next);
    low.set(v, next++);
    stack.push(v);
    onStack.add(v);
    for (const w of graph.get(v) ?? []) {
      if (!index.has(w)) {
        visit(w);
        low.set(v, Math.min(low.get(v) as number, low.get(w) as number));
      } else if (onStack.has(w)) low.set(v, Math.min(low.get(v) as number, index.get(w) as number));
    }
    if (low.get(v) !== index.get(v)) return;
    const component: string[] = [];
    for (;;) {
      const w = stack.pop() as string;
      onStack.delete(w);
      component.push(w);
      if (w === v) break;
    }
    if (component.length > 1 || (graph.get(v) ?? []).includes(v)) found.push(component.sort());
  };
  for (const v of graph.keys()) if (!index.has(v)) visit(v);
  return found;
}

describe('import graph', () => {
  it('finds cycles, and only cycles, in small graphs', () => {
    const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    assert.deepEqual(cycles(g({ a: ['b'], b: ['c'], c: [] })), []);
    assert.deepEqual(cycles(g({ a: ['b'], b: ['c'], c: ['a'], d: ['a'] })), [['a', 'b', 'c']]);
    assert.deepEqual(cycles(g({ a: ['a'], b: [] })), [['a']]);
    assert.deepEqual(cycles(g({ a: ['b'], b: ['a'], c: ['d'], d: ['c'] })).length, 2);
  });

  it('reads relative imports, re-exports, requires and side-effect imports', () => {
    const dir = path.join(ROOT, 'lib', 'x');
    const known = new Set(['a', 'b', 'c', 'd', 'e/index'].map((n) => path.join(dir, `${n}.ts`)));
    const text = [
      "import { a } from './a';",
      "export { b } from './b';",
      "import type { C } from './c';",
      "const d = require('./d') as typeof import('./d');",
      "import './e';",
      "import { z } from 'zod';",
    ].join('\n');
    const got = importsOf(path.join(dir, 'main.ts'), text, known).map((f) => path.relative(dir, f));
    assert.deepEqual(got.sort(), ['a.ts', 'b.ts', 'c.ts', 'd.ts', path.join('e', 'index.ts')]);
  });

  it('has no cycle among lib, functions and local', () => {
    const files = FOLDERS.flatMap((f) => sources(path.join(ROOT, f)));
    assert.ok(files.length > 100, `expected the service's sources under ${ROOT}, found ${files.length} files`);
    const known = new Set(files);
    const graph = new Map(files.map((f) => [f, importsOf(f, readFileSync(f, 'utf8'), known)]));
    const found = cycles(graph).map((c) => c.map((f) => path.relative(ROOT, f)).join(' → '));
    assert.deepEqual(found, [], `import cycles:\n${found.join('\n')}`);
  });
});
