/**
 * `npm run docs`: writes docs/configuration.md from the zod settings schema (lib/config/settings-page.ts), and
 * docs/api-reference.md and console/src/api-contract.ts from the route contracts (scripts/write-contracts.ts).
 * test/docs/configuration-page.test.ts and test/docs/api-reference-page.test.ts fail when they are stale.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { configSettings } from '../lib/config/env-schema';
import { configurationPage } from '../lib/config/settings-page';
import { writeContracts } from './write-contracts';

const ROOT = path.resolve(__dirname, '../..');
const file = path.join(ROOT, 'docs', 'configuration.md');
writeFileSync(file, configurationPage(configSettings()));
process.stdout.write(`wrote ${path.relative(ROOT, file)} (${configSettings().length} settings)\n`);
void writeContracts(ROOT).then((written) => {
  for (const f of written) process.stdout.write(`wrote ${f}\n`);
});
