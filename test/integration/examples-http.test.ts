/**
 * The examples as a newcomer meets them: each of `examples/payment*.json`, sent once, in the README's order, to a
 * fresh host, gets the decision the README and docs/api.md give it; the sample answers they print are the real
 * answers (every field, the same values but `timing`); the ruleset status docs/api.md prints for a fresh start is
 * the real one.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { http } from '../support/http';
import { hostWithoutRedis } from '../support/suite-host';

const ROOT = path.resolve(__dirname, '../../..');
const read = (...p: string[]): string => readFileSync(path.join(ROOT, ...p), 'utf8');

/** The first ```json block after `marker` in `text`, parsed. */
function jsonBlockAfter(text: string, marker: string, where: string): Record<string, unknown> {
  const at = text.indexOf(marker);
  assert.ok(at >= 0, `${where}: no "${marker}"`);
  const start = text.indexOf('```json\n', at);
  const end = text.indexOf('\n```', start + 8);
  assert.ok(start >= 0 && end > start, `${where}: no json block after "${marker}"`);
  return JSON.parse(text.slice(start + 8, end)) as Record<string, unknown>;
}

/** The answer without `timing` (it differs on every call); `timing` keeps only its keys. */
function comparable(answer: Record<string, unknown>): Record<string, unknown> {
  const { timing, ...rest } = answer;
  return { ...rest, timing: Object.keys(timing as Record<string, unknown>).sort() };
}

/** Each example, in the order the README lists them, with what a fresh host answers. */
const EXAMPLES: readonly { file: string; decision: string; rules: string[]; profile: string }[] = [
  { file: 'payment.json', decision: 'approve', rules: [], profile: 'default' },
  { file: 'payment-review.json', decision: 'review', rules: ['large-amount-new-device'], profile: 'default' },
  {
    file: 'payment-risky.json',
    decision: 'decline',
    rules: ['large-amount-new-device', 'gambling-large-amount'],
    profile: 'gambling',
  },
  { file: 'payment-rich.json', decision: 'approve', rules: [], profile: 'default' },
  { file: 'payment-deep.json', decision: 'approve', rules: [], profile: 'default' },
];

describe('the examples and the sample answers in the docs', () => {
  const suite = hostWithoutRedis();

  it('each example gets its documented decision; the README and api.md print whole, real answers', async () => {
    const answers = new Map<string, Record<string, unknown>>();
    for (const e of EXAMPLES) {
      const r = await http().post(`${suite.api}/score`, read('examples', e.file));
      assert.equal(r.status, 200, e.file);
      assert.equal(r.json['decision'], e.decision, e.file);
      assert.deepEqual(
        (r.json['rules'] as { id: string }[]).map((x) => x.id),
        e.rules,
        e.file,
      );
      assert.deepEqual(r.json['profile'], { id: e.profile }, e.file);
      assert.equal(r.json['source'], 'local', `${e.file}: nothing is escalated without Azure OpenAI`);
      answers.set(e.file, r.json);
    }
    const readme = jsonBlockAfter(read('README.md'), 'A first call:', 'README.md');
    assert.deepEqual(comparable(readme), comparable(answers.get('payment.json') ?? {}), 'README.md sample answer');
    assert.deepEqual(Object.keys(readme), Object.keys(answers.get('payment.json') ?? {}), 'in the order it is sent');
    const api = jsonBlockAfter(read('docs', 'api.md'), "this one is `examples/payment-risky.json`'s", 'docs/api.md');
    assert.deepEqual(comparable(api), comparable(answers.get('payment-risky.json') ?? {}), 'docs/api.md sample');
    assert.deepEqual(Object.keys(api), Object.keys(answers.get('payment-risky.json') ?? {}));
  });

  it('the invalid example is a 400', async () => {
    const r = await http().post(`${suite.api}/score`, read('examples', 'payment-invalid.json'));
    assert.equal(r.status, 400);
    assert.equal(r.json['code'], 'validation_failed');
  });

  it('GET /api/rulesets/{name} on a fresh start answers what docs/api.md prints', async () => {
    const res = await fetch(`${suite.api}/rulesets/fraud-rules`);
    assert.equal(res.status, 200);
    const doc = jsonBlockAfter(
      read('docs', 'api.md'),
      'A fresh `npm start` (the shipped version serves',
      'docs/api.md',
    );
    assert.deepEqual(await res.json(), doc);
  });
});
