/**
 * Writes console/src/api-contract.ts (formatted as `npm run format` would) and docs/api-reference.md from the route
 * contracts (lib/contracts); run by `npm run docs` (scripts/write-docs.ts). test/docs/api-reference-page.test.ts
 * fails when either is stale.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import * as prettier from 'prettier';
import { CONTRACTS } from '../lib/contracts';
import { apiContractCode } from '../lib/contracts/api-contract-code';
import { apiReferencePage } from '../lib/contracts/api-reference-page';

/** The generated files under `root`: path and text. */
export async function contractFiles(root: string): Promise<[string, string][]> {
  const code = path.join(root, 'console', 'src', 'api-contract.ts');
  const options = { ...(await prettier.resolveConfig(code)), filepath: code };
  return [
    [code, await prettier.format(apiContractCode(CONTRACTS), options)],
    [path.join(root, 'docs', 'api-reference.md'), apiReferencePage(CONTRACTS)],
  ];
}

/** Writes the generated files under `root`; returns their paths, relative to it. */
export async function writeContracts(root: string): Promise<string[]> {
  const files = await contractFiles(root);
  for (const [file, text] of files) writeFileSync(file, text);
  return files.map(([file]) => path.relative(root, file));
}
