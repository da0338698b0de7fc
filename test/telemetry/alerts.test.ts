/** The alert rules as code and the README agree, and every metric a rule reads is one the app records. */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '../../..');

async function bicepRules(): Promise<{ name: string; query: string }[]> {
  const text = await fs.readFile(path.join(ROOT, 'infra-bicep/modules/alerts.bicep'), 'utf8');
  return [...text.matchAll(/name: '([a-z0-9-]+)'\n(?:.*\n){3}? {4}query: '''\n([\s\S]*?)'''/g)].map((m) => ({
    name: m[1] ?? '',
    query: m[2] ?? '',
  }));
}

describe('alerts as code', () => {
  it('defines the six alerts, and the README shows each query verbatim', async () => {
    const rules = await bicepRules();
    assert.deepEqual(
      rules.map((r) => r.name),
      ['request-p95', 'inference-p95', 'cache-hit-ratio', 'breaker-open', 'model-version-split', 'shed-rate'],
    );
    const readme = await fs.readFile(path.join(ROOT, 'README.md'), 'utf8');
    for (const r of rules) assert.ok(readme.includes(`\`\`\`kusto\n${r.query}\`\`\``), `README shows ${r.name}`);
  });

  it('reads only metrics and span names the app records', async () => {
    const sources = (
      await Promise.all(
        [
          'lib/telemetry/instruments.ts',
          'lib/telemetry/invocation-tracing.ts',
          'lib/telemetry/traced-components.ts',
        ].map((f) => fs.readFile(path.join(ROOT, f), 'utf8')),
      )
    ).join('\n');
    for (const r of await bicepRules()) {
      for (const [, name] of r.query.matchAll(/"((?:scoring|inference)\.[a-z_.]+)"/g))
        assert.ok(sources.includes(`'${name}'`), `${r.name}: ${name ?? ''} is recorded`);
    }
  });
});
