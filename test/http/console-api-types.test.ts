/**
 * The console declares no API type by hand: its API shapes come from console/src/api-contract.ts, generated from
 * the route contracts (console/src/types.ts re-exports them under the names the views import). Every type the
 * console's own files declare must be a shape of the page itself (listed below); a new one fails here until it is
 * listed as such or, when it is an answer or a body of the API, declared in a contract instead.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const SRC = path.resolve(__dirname, '../../../console/src');

/** Types of the page itself, not of the API (DOM children, attributes, filters, failure texts, call arguments). */
const PAGE_TYPES = new Set([
  'dom.ts:Child',
  'dom.ts:Attrs',
  'failure.ts:Explained',
  'queue.ts:QueueFilters',
  'case-fields.ts:Field',
  'case-reasons.ts:Plain',
  'case-verdict.ts:Pending',
  'api.ts:ProblemFields', // derived from the generated Problem
  'api.ts:CallArgs', // derived from the generated route table
  'webhooks-view.ts:Revealed', // a secret the page shows once, with what it is for
]);

const DECLARATION = /^\s*(?:export\s+)?(?:declare\s+)?(?:interface|type)\s+([A-Za-z_$][\w$]*)/gm;

/** `file:Name` of every interface and type alias the console's own files declare. */
function declared(): string[] {
  return readdirSync(SRC)
    .filter((f) => f.endsWith('.ts') && f !== 'api-contract.ts')
    .flatMap((f) => [...readFileSync(path.join(SRC, f), 'utf8').matchAll(DECLARATION)].map((m) => `${f}:${m[1]}`));
}

describe('console API types', () => {
  it('the console declares no API type by hand', () => {
    const byHand = declared().filter((d) => !PAGE_TYPES.has(d));
    assert.deepEqual(byHand, [], 'declare these in a contract (lib/contracts) and import the generated type');
  });

  it('every page type listed is still declared', () => {
    const now = new Set(declared());
    assert.deepEqual(
      [...PAGE_TYPES].filter((d) => !now.has(d)),
      [],
      'remove these from PAGE_TYPES',
    );
  });

  it('the views call the API through the typed `call()` only (no `api<T>` with a hand-given type)', () => {
    const raw = /\bapi\s*(?:<[^>]*>)?\s*\(/;
    const calling = readdirSync(SRC)
      .filter((f) => f.endsWith('.ts') && f !== 'api.ts' && f !== 'api-contract.ts')
      .filter((f) => raw.test(readFileSync(path.join(SRC, f), 'utf8')));
    assert.deepEqual(calling, [], 'call the route by its contract name: call(name, { params, query, body })');
    assert.ok(raw.test("await api<{ drafts: Draft[] }>('rulesets/x/drafts')"), 'the check finds a raw call');
  });

  it('finds a hand-declared type (the check can fail)', () => {
    const text = 'export interface Case {\n  id: string;\n}\ntype Obj = Record<string, unknown>;\n';
    assert.deepEqual(
      [...text.matchAll(DECLARATION)].map((m) => m[1]),
      ['Case', 'Obj'],
    );
  });
});
