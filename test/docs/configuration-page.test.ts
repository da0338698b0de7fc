/**
 * docs/configuration.md is generated from the zod settings schema (`npm run docs`): the committed page must be
 * exactly what the generator writes now, name every setting, and say what each does.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { z } from 'zod';
import { configSettings } from '../../lib/config/env-schema';
import { bool, int, num, optStr } from '../../lib/config/zod-helpers';
import { acceptedValues, configurationPage } from '../../lib/config/settings-page';

const ROOT = path.resolve(__dirname, '../../..');
const committed = (): string => readFileSync(path.join(ROOT, 'docs', 'configuration.md'), 'utf8');

describe('docs/configuration.md', () => {
  it('is what `npm run docs` generates from the schema now (run `npm run docs` when this fails)', () => {
    const generated = configurationPage(configSettings());
    if (generated !== committed()) {
      const a = generated.split('\n');
      const b = committed().split('\n');
      const line = a.findIndex((l, i) => l !== b[i]);
      assert.fail(
        `docs/configuration.md is stale: run \`npm run docs\`. First difference at line ${line + 1}:\n` +
          `  generated: ${a[line] ?? '(end)'}\n  committed: ${b[line] ?? '(end)'}`,
      );
    }
  });

  it('has a table row for every setting of the schema', () => {
    const page = committed();
    const missing = configSettings()
      .map((s) => s.name)
      .filter((n) => !page.includes(`\n| \`${n}\` |`));
    assert.deepEqual(missing, [], `docs/configuration.md lacks rows for: ${missing.join(', ')}`);
  });

  it('every setting says what it does (a .describe() text in the schema)', () => {
    const bare = configSettings()
      .filter((s) => (s.description ?? '').trim() === '')
      .map((s) => s.name);
    assert.deepEqual(bare, [], `add .describe() to: ${bare.join(', ')}`);
  });

  it('reads the accepted values from the schema', () => {
    assert.equal(acceptedValues(int(1, 64, 8)), 'integer, 1 to 64');
    assert.equal(acceptedValues(num(0, 1, 0.5)), 'number, 0 to 1');
    assert.equal(acceptedValues(bool(true)), '`true` or `false` (`1`, `0`)');
    assert.equal(acceptedValues(optStr), 'text');
    assert.equal(acceptedValues(z.url().optional()), 'URL');
    assert.equal(acceptedValues(z.enum(['a', 'b']).default('a')), 'one of `a`, `b`');
    const providers = configSettings().find((s) => s.name === 'ORT_EXECUTION_PROVIDERS');
    assert.match(acceptedValues(providers?.schema ?? optStr), /^comma-separated, each one of `cpu`, `cuda`/);
  });
});
