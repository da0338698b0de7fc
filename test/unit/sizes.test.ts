/**
 * No file in `lib/` is over 300 lines and no function there over 80 (the body, braces included), read with the
 * TypeScript parser: function declarations, methods, constructors, accessors, arrow functions and function
 * expressions. `PENDING` names what is still over, each with the figure it is at: an entry that is no longer over
 * fails too, so the list only shrinks.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import * as ts from 'typescript';
import { filesUnder } from '../support/files-under';

const ROOT = path.resolve(__dirname, '../../..');
const MAX_FILE_LINES = 300;
const MAX_FUNCTION_LINES = 80;

/** What is over its limit today, by `file` or `file#function`. */
const PENDING: ReadonlySet<string> = new Set<string>([]);

/** Every file and function of `text` over its limit, as `file (N lines)` / `file#name (N lines)`. */
export function oversized(file: string, text: string): string[] {
  const out: string[] = [];
  const lines = text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
  if (lines > MAX_FILE_LINES) out.push(`${file} (${lines} lines)`);
  const sf = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (n: ts.Node): void => {
    const body = (n as { body?: ts.Node }).body;
    const isFunction =
      ts.isFunctionDeclaration(n) ||
      ts.isMethodDeclaration(n) ||
      ts.isConstructorDeclaration(n) ||
      ts.isGetAccessorDeclaration(n) ||
      ts.isSetAccessorDeclaration(n) ||
      ts.isArrowFunction(n) ||
      ts.isFunctionExpression(n);
    if (isFunction && body !== undefined) {
      const first = sf.getLineAndCharacterOfPosition(body.getStart(sf)).line;
      const last = sf.getLineAndCharacterOfPosition(body.getEnd()).line;
      const n2 = last - first + 1;
      if (n2 > MAX_FUNCTION_LINES) out.push(`${file}#${nameOf(n, sf)} (${n2} lines)`);
    }
    ts.forEachChild(n, visit);
  };
  visit(sf);
  return out;
}

function nameOf(n: ts.Node, sf: ts.SourceFile): string {
  const named = (n as { name?: ts.Node }).name;
  if (named !== undefined) return named.getText(sf);
  const parent = n.parent;
  if (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) return parent.name.getText(sf);
  return `(function at line ${sf.getLineAndCharacterOfPosition(n.getStart(sf)).line + 1})`;
}

const key = (entry: string): string => entry.replace(/ \(\d+ lines\)$/, '');

describe('sizes in lib/', () => {
  it('finds a long file and a long function (the check can fail)', () => {
    const long = Array.from({ length: 90 }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const text = `export function big(): void {\n${long}\n}\n` + '// filler\n'.repeat(220);
    assert.deepEqual(oversized('x.ts', text).map(key), ['x.ts', 'x.ts#big']);
    assert.deepEqual(oversized('y.ts', 'export const f = (): number => 1;\n'), []);
  });

  it(`no file is over ${MAX_FILE_LINES} lines and no function over ${MAX_FUNCTION_LINES}`, () => {
    const files = filesUnder(path.join(ROOT, 'lib'), (f) => f.endsWith('.ts') && !f.endsWith('.d.ts'));
    assert.ok(files.length > 200, `the walk finds lib's files (${files.length})`);
    const over = files.flatMap((f) => oversized(path.relative(ROOT, f), readFileSync(f, 'utf8')));
    assert.deepEqual(
      over.filter((e) => !PENDING.has(key(e))),
      [],
      'split these (house style: files under ~300 lines, functions under ~80)',
    );
    const still = new Set(over.map(key));
    assert.deepEqual(
      [...PENDING].filter((p) => !still.has(p)),
      [],
      'no longer over: take these out of PENDING',
    );
  });
});
