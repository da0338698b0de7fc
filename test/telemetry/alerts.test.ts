/**
 * The alert rules as code and docs/operations.md agree (each query verbatim, with its runbook), and every metric a
 * rule reads is one the app records.
 */
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
  it('defines the nine alerts, and docs/operations.md shows each query verbatim with a runbook', async () => {
    const rules = await bicepRules();
    assert.deepEqual(
      rules.map((r) => r.name),
      [
        'request-p95',
        'inference-p95',
        'cache-hit-ratio',
        'breaker-open',
        'model-version-split',
        'shed-rate',
        'case-oldest-open',
        'case-drops',
        'case-sla-breached',
      ],
    );
    const page = await fs.readFile(path.join(ROOT, 'docs', 'operations.md'), 'utf8');
    for (const r of rules) {
      const start = page.indexOf(`### \`scoring-${r.name}\``);
      assert.ok(start >= 0, `docs/operations.md has a section for scoring-${r.name}`);
      const end = page.indexOf('\n#', start + 1);
      const section = page.slice(start, end < 0 ? undefined : end);
      assert.ok(section.includes(`\`\`\`kusto\n${r.query}\`\`\``), `docs/operations.md shows the query of ${r.name}`);
      for (const part of ['What it means', 'What to check', 'What to do'])
        assert.ok(section.includes(`**${part}.**`), `the runbook of ${r.name} says ${part}`);
    }
  });

  it('reads only metrics and span names the app records', async () => {
    const sources = (
      await Promise.all(
        [
          'lib/telemetry/instruments.ts',
          'lib/telemetry/invocation-tracing.ts',
          'lib/telemetry/traced-components.ts',
          'lib/telemetry/case-metrics.ts',
        ].map((f) => fs.readFile(path.join(ROOT, f), 'utf8')),
      )
    ).join('\n');
    for (const r of await bicepRules()) {
      for (const [, name] of r.query.matchAll(/"((?:scoring|inference|cases)\.[a-z_.]+)"/g))
        assert.ok(sources.includes(`'${name}'`), `${r.name}: ${name ?? ''} is recorded`);
    }
  });
});
