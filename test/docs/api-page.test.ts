/** docs/api.md names every HTTP route the app registers, and its error table is lib/errors/errors.ts's map. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { ERROR_CODES, STATUS_BY_CODE } from '../../lib/errors/errors';
import { registeredBindings } from '../infra/support/sources';

const ROOT = path.resolve(__dirname, '../../..');
const page = (): string => readFileSync(path.join(ROOT, 'docs', 'api.md'), 'utf8');

describe('docs/api.md', () => {
  it('lists every error code with the status lib/errors/errors.ts maps it to', () => {
    const text = page();
    const wrong = ERROR_CODES.filter((c) => !text.includes(`| \`${c}\` | ${STATUS_BY_CODE[c]} |`));
    assert.deepEqual(wrong, [], `docs/api.md error table: missing or wrong status for ${wrong.join(', ')}`);
  });

  it('names every HTTP route the function modules register, with its method', async () => {
    const text = page();
    const unversioned = text.replaceAll('[/versions/{version}]', ''); // `x[/versions/{version}]/y` names both routes
    const missing: string[] = [];
    for (const b of await registeredBindings()) {
      if (b.binding.type !== 'httpTrigger') continue;
      const route = String(b.binding['route']);
      const versioned = route.replace('/versions/{version}', '[/versions/{version}]');
      for (const method of (b.binding['methods'] as string[] | undefined) ?? []) {
        const m = method.toUpperCase();
        const named = [`${m} /api/${route}`, `${m} ${versioned}`].some((n) => text.includes(n));
        if (!named && !unversioned.includes(`${m} ${route}`)) missing.push(`${m} ${route} (${b.functionName})`);
      }
    }
    assert.deepEqual(missing, [], `docs/api.md does not name: ${missing.join('; ')}`);
  });
});
