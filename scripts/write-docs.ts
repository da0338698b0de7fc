/**
 * `npm run docs`: writes docs/configuration.md from the zod settings schema (lib/config/settings-page.ts).
 * test/docs/configuration-page.test.ts fails when the committed page differs from what this writes.
 */
import { writeFileSync } from 'node:fs';
import * as path from 'node:path';
import { configSettings } from '../lib/config/env-schema';
import { configurationPage } from '../lib/config/settings-page';

const ROOT = path.resolve(__dirname, '../..');
const file = path.join(ROOT, 'docs', 'configuration.md');
writeFileSync(file, configurationPage(configSettings()));
process.stdout.write(`wrote ${path.relative(ROOT, file)} (${configSettings().length} settings)\n`);
