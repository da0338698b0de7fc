/**
 * docs/api-reference.md and console/src/api-contract.ts are generated from the route contracts (lib/contracts) by
 * `npm run docs`: the committed files must be exactly what the generator writes now. The contracts themselves match
 * what runs: every contract's route is registered by the function modules with its method and auth level, every
 * `{parameter}` of a template is declared, and the case service reads the query names the contracts declare.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  CASE_ANALYTICS_PARAMS,
  CASE_LIST_PARAMS,
  CASE_NEXT_PARAMS,
  CASE_SEARCH_PARAMS,
} from '../../lib/cases/case-requests';
import { CONTRACTS } from '../../lib/contracts';
import * as cases from '../../lib/contracts/cases';
import type { Contract } from '../../lib/http/contract';
import * as prettier from 'prettier';
import { apiContractCode } from '../../lib/contracts/api-contract-code';
import { apiReferencePage } from '../../lib/contracts/api-reference-page';
import { registeredBindings } from '../infra/support/sources';

const ROOT = path.resolve(__dirname, '../../..');

/** What `npm run docs` writes (scripts/write-contracts.ts): the console module formatted as `npm run format` does. */
async function generated(): Promise<[string, string][]> {
  const code = path.join(ROOT, 'console', 'src', 'api-contract.ts');
  const options = { ...(await prettier.resolveConfig(code)), filepath: code };
  return [
    [code, await prettier.format(apiContractCode(CONTRACTS), options)],
    [path.join(ROOT, 'docs', 'api-reference.md'), apiReferencePage(CONTRACTS)],
  ];
}

/**
 * Routes not declared by a contract: the console's static files and the problem types (no JSON API). A new route
 * needs a contract.
 */
const WITHOUT_CONTRACT = new Set(['console', 'consoleFiles', 'problemType']);

/** The first line where `a` and `b` differ, for the failure message. */
function firstDifference(a: string, b: string): string {
  const x = a.split('\n');
  const y = b.split('\n');
  const line = x.findIndex((l, i) => l !== y[i]);
  return `line ${line + 1}:\n  generated: ${x[line] ?? '(end)'}\n  committed: ${y[line] ?? '(end)'}`;
}

const keysOf = (s: Contract['query'] | Contract['body']): string[] =>
  s !== undefined && 'shape' in s ? Object.keys(s.shape as object) : [];

describe('generated from the route contracts', () => {
  it('docs/api-reference.md and console/src/api-contract.ts are what `npm run docs` writes now', async () => {
    for (const [file, text] of await generated()) {
      const committed = readFileSync(file, 'utf8');
      if (text !== committed)
        assert.fail(`${path.relative(ROOT, file)} is stale: run \`npm run docs\`. ${firstDifference(text, committed)}`);
    }
  });

  it('every contract is a registered route, with its method and auth level; names are unique', async () => {
    const http = (await registeredBindings()).filter((b) => b.binding.type === 'httpTrigger');
    const wrong: string[] = [];
    for (const c of CONTRACTS) {
      const b = http.find((x) => x.functionName === c.name);
      const methods = ((b?.binding['methods'] as string[] | undefined) ?? []).map((m) => m.toUpperCase());
      const auth = c.auth === 'people' ? 'function' : c.auth; // IDENTITY_MODE is not easyauth here
      if (b === undefined) wrong.push(`${c.name}: not registered`);
      else if (String(b.binding['route']) !== c.route) wrong.push(`${c.name}: route ${String(b.binding['route'])}`);
      else if (methods.join() !== c.method) wrong.push(`${c.name}: methods ${methods.join()}`);
      else if (String(b.binding['authLevel']).toLowerCase() !== auth) wrong.push(`${c.name}: auth level`);
    }
    assert.deepEqual(wrong, []);
    assert.equal(new Set(CONTRACTS.map((c) => c.name)).size, CONTRACTS.length);
  });

  it('every other registered route is one of those still without a contract', async () => {
    const declared = new Set(CONTRACTS.map((c) => c.name));
    const without = (await registeredBindings())
      .filter((b) => b.binding.type === 'httpTrigger' && !declared.has(b.functionName))
      .map((b) => b.functionName);
    const unexpected = without.filter((n) => !WITHOUT_CONTRACT.has(n));
    assert.deepEqual(unexpected, [], 'declare these routes in lib/contracts and register them with route()');
  });

  it("declares every {parameter} of each route's template, and no other", () => {
    const wrong = CONTRACTS.filter((c) => {
      const inTemplate = [...c.route.matchAll(/\{(\w+)\}/g)].map((m) => m[1]).sort();
      return inTemplate.join() !== keysOf(c.params).sort().join();
    }).map((c) => c.name);
    assert.deepEqual(wrong, []);
  });

  it('the case service reads the query names (and search fields) the contracts declare', () => {
    assert.deepEqual(keysOf(cases.casesList.query), [...CASE_LIST_PARAMS]);
    assert.deepEqual(keysOf(cases.casesNext.query), [...CASE_NEXT_PARAMS]);
    assert.deepEqual(keysOf(cases.casesAnalytics.query), [...CASE_ANALYTICS_PARAMS]);
    assert.deepEqual(keysOf(cases.casesSearch.body), [...CASE_SEARCH_PARAMS]);
  });
});
