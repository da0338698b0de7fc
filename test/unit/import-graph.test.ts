/**
 * House style: no import cycles among the service's modules (`lib`, `functions`, `local`), and every import
 * follows the layers ARCHITECTURE.md lists. Builds the graph of relative imports from the TypeScript sources
 * (type-only imports included: a cycle of types still ties the modules together, and a type imported upward
 * still runs against the layering) and fails naming every cycle and every offending import. The finders
 * themselves are checked on small graphs.
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

/** A layer's entries: folders (`lib/context`) or single files (`lib/app.ts`), relative to the root, `/`-separated. */
type Layers = readonly (readonly string[])[];

/**
 * The layers of the `## Layers` section of ARCHITECTURE.md, lowest first: each numbered item opens with its
 * entries in backticks, separated by commas (the text after them describes the layer).
 */
function parseLayers(markdown: string): Layers {
  const section = /^## Layers\n([\s\S]*?)(?=^## |(?![\s\S]))/m.exec(markdown)?.[1] ?? '';
  const items = section.split(/^(?=\d+\.\s)/m).filter((item) => /^\d+\.\s/.test(item));
  return items.map((item) => {
    const head = /^\d+\.\s+((?:`[^`]+`(?:,\s*)?)+)/.exec(item)?.[1] ?? '';
    return [...head.matchAll(/`([^`]+)`/g)].map((m) => m[1] as string);
  });
}

/** The entry `file` belongs to (the longest entry that is the file or a folder holding it) and its layer. */
function placeOf(file: string, layers: Layers): { entry: string; layer: number } | undefined {
  let best: { entry: string; layer: number } | undefined;
  layers.forEach((entries, layer) => {
    for (const entry of entries)
      if ((file === entry || file.startsWith(`${entry}/`)) && (best === undefined || entry.length > best.entry.length))
        best = { entry, layer };
  });
  return best;
}

/**
 * Every edge of `graph` (files relative to the root, `/`-separated) that breaks the layering: an import of
 * another entry of the same layer or of a higher one. Also every file that is in no layer.
 */
function layerViolations(graph: ReadonlyMap<string, readonly string[]>, layers: Layers): string[] {
  const found: string[] = [];
  for (const [from, targets] of graph) {
    const a = placeOf(from, layers);
    if (a === undefined) {
      found.push(`${from} is in no layer`);
      continue;
    }
    for (const to of targets) {
      const b = placeOf(to, layers);
      if (b === undefined || b.entry === a.entry || b.layer < a.layer) continue;
      const where = b.layer === a.layer ? 'the same layer' : `layer ${b.layer + 1}`;
      found.push(`${from} → ${to}: ${a.entry} (layer ${a.layer + 1}) may not import ${b.entry} (${where})`);
    }
  }
  return found;
}

/** The import graph of the service's sources, files relative to the root with `/` separators. */
function serviceGraph(): Map<string, string[]> {
  const files = FOLDERS.flatMap((f) => sources(path.join(ROOT, f)));
  assert.ok(files.length > 100, `expected the service's sources under ${ROOT}, found ${files.length} files`);
  const known = new Set(files);
  const rel = (f: string): string => path.relative(ROOT, f).split(path.sep).join('/');
  return new Map(files.map((f) => [rel(f), importsOf(f, readFileSync(f, 'utf8'), known).map(rel)]));
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
    const found = cycles(serviceGraph()).map((c) => c.join(' → '));
    assert.deepEqual(found, [], `import cycles:\n${found.join('\n')}`);
  });

  it('reads the layers of a markdown list, entries before the description', () => {
    const md = [
      '# Map',
      '## Layers',
      'Lowest first.',
      '',
      '1. `lib/errors`, `lib/telemetry/logger.ts`: the base, see `lib/x`',
      '2. `lib/a`, `lib/b`: two parts',
      '   that wrap',
      '10. `lib/app.ts`: the root',
      '## Decisions',
      '1. `lib/not-a-layer`',
    ].join('\n');
    assert.deepEqual(parseLayers(md), [['lib/errors', 'lib/telemetry/logger.ts'], ['lib/a', 'lib/b'], ['lib/app.ts']]);
  });

  it('finds imports that go up or sideways, and files in no layer, in small graphs', () => {
    const layers: Layers = [['lib/base', 'lib/t/narrow.ts'], ['lib/a', 'lib/b'], ['lib/t'], ['lib/top.ts']];
    const g = (edges: Record<string, string[]>) => new Map(Object.entries(edges));
    // down, within a folder, and to a file entry below its own folder: allowed
    const fine = g({
      'lib/a/x.ts': ['lib/base/e.ts', 'lib/a/y.ts', 'lib/t/narrow.ts'],
      'lib/t/wide.ts': ['lib/t/narrow.ts', 'lib/a/x.ts', 'lib/t/other.ts'],
      'lib/top.ts': ['lib/t/wide.ts', 'lib/b/z.ts'],
    });
    assert.deepEqual(layerViolations(fine, layers), []);
    assert.deepEqual(
      layerViolations(
        g({
          'lib/base/e.ts': ['lib/a/x.ts'],
          'lib/a/x.ts': ['lib/b/z.ts'],
          'lib/t/narrow.ts': ['lib/t/wide.ts'],
          'lib/c/new.ts': [],
        }),
        layers,
      ),
      [
        'lib/base/e.ts → lib/a/x.ts: lib/base (layer 1) may not import lib/a (layer 2)',
        'lib/a/x.ts → lib/b/z.ts: lib/a (layer 2) may not import lib/b (the same layer)',
        'lib/t/narrow.ts → lib/t/wide.ts: lib/t/narrow.ts (layer 1) may not import lib/t (layer 3)',
        'lib/c/new.ts is in no layer',
      ],
    );
  });

  it('checks folders: every layer entry is a folder (or a root file of lib/, functions/, local/), none inside another', () => {
    const layers = parseLayers(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
    const entries = layers.flat();
    const problems = entries.filter((e) => {
      const parts = e.split('/');
      const isRootFile = parts.length === 2 && e.endsWith('.ts');
      return !(isRootFile || (parts.length <= 2 && !e.endsWith('.ts')));
    });
    for (const e of entries)
      for (const f of entries) if (e !== f && f.startsWith(`${e}/`)) problems.push(`${f} lies inside ${e}`);
    assert.deepEqual(problems, [], `layer entries that are not folders:\n${problems.join('\n')}`);
  });

  it('has no cycle among the folders (type imports included)', () => {
    const layers = parseLayers(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
    const folders = new Map<string, Set<string>>();
    for (const [from, targets] of serviceGraph()) {
      const a = placeOf(from, layers)?.entry ?? from;
      const out = folders.get(a) ?? new Set<string>();
      folders.set(a, out);
      for (const to of targets) {
        const b = placeOf(to, layers)?.entry ?? to;
        if (b !== a) out.add(b);
      }
    }
    const found = cycles(new Map([...folders].map(([k, v]) => [k, [...v]]))).map((c) => c.join(' → '));
    assert.deepEqual(found, [], `folder cycles:\n${found.join('\n')}`);
  });

  it('follows the layers of ARCHITECTURE.md', () => {
    const layers = parseLayers(readFileSync(path.join(ROOT, 'ARCHITECTURE.md'), 'utf8'));
    assert.ok(layers.length >= 10, `expected the layer list of ARCHITECTURE.md, found ${layers.length} layers`);
    const found = layerViolations(serviceGraph(), layers);
    assert.deepEqual(found, [], `imports against the layering of ARCHITECTURE.md:\n${found.join('\n')}`);
  });
});
