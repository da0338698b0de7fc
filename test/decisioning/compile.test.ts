import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { loadRuleset } from '../../lib/decisioning/load-ruleset';

const ROOT = path.resolve(__dirname, '../../..');
const MODEL = { review: 0.2054, decline: 0.7493 };

function rejection(doc: unknown): AppError {
  try {
    loadRuleset(JSON.stringify(doc), MODEL);
  } catch (err) {
    assert.ok(err instanceof AppError);
    return err;
  }
  assert.fail('the ruleset was accepted');
}

describe('loading a ruleset', () => {
  it('loads the shipped example and passes its golden cases', () => {
    const rs = loadRuleset(readFileSync(path.join(ROOT, 'rulesets/fraud-rules/1.0.0.json'), 'utf8'), MODEL);
    assert.deepEqual([rs.name, rs.version], ['fraud-rules', '1.0.0']);
    assert.deepEqual(rs.listsUsed, [{ name: 'blocked_users', key: 'userId' }]);
    assert.ok(rs.document.golden.length >= 5);
  });

  it('rejects the whole ruleset, naming each rule id and column that does not compile', () => {
    const e = rejection({
      name: 'r',
      version: '1',
      lists: [{ name: 'vip', key: 'userId' }],
      rules: [
        { id: 'fine', when: 'event.amount > 10.0', action: 'review' },
        { id: 'syntax', when: 'event.amount >', action: 'block' },
        { id: 'unknown-var', when: 'nosuch > 1', action: 'review' },
        { id: 'undeclared-list', when: 'in_list("nope", event.userId)', action: 'block' },
        { id: 'wrong-key', when: 'event.amount > 1.0 && in_list("vip", event.deviceId)', action: 'allow' },
        { id: 'not-bool', when: '1 + 2', action: 'review' },
      ],
    });
    assert.equal(e.code, 'ruleset_invalid');
    assert.equal(e.status, 422);
    assert.deepEqual(
      e.errors.map((x) => x.path),
      ['rules.1.when', 'rules.2.when', 'rules.3.when', 'rules.4.when', 'rules.5.when'],
    );
    assert.match(e.errors[0]?.message ?? '', /^rule syntax: column 15: /);
    assert.match(e.errors[2]?.message ?? '', /^rule undeclared-list: column 1: .*not declared/);
    assert.match(e.errors[3]?.message ?? '', /^rule wrong-key: column 23: .*event\.userId/);
    assert.match(e.message, /syntax.*unknown-var.*undeclared-list.*wrong-key.*not-bool/);
    // the message names the ruleset, its version, each rule with its path and column; errors carry them too
    assert.match(e.message, /^Ruleset r 1 does not compile: rule syntax \(rules\.1\.when, column 15\): /);
    assert.match(e.message, /rule wrong-key \(rules\.4\.when, column 23\): /);
    assert.deepEqual(
      e.errors.map((x) => [x.rule, x.column]),
      [
        ['syntax', 15],
        ['unknown-var', 1],
        ['undeclared-list', 1],
        ['wrong-key', 23],
        ['not-bool', 1],
      ],
    );
  });

  it('names the file or blob a rejected ruleset came from', () => {
    const doc = { name: 'r', version: '1.2.3', rules: [{ id: 'bad', when: 'event.amount >', action: 'block' }] };
    assert.throws(
      () => loadRuleset(JSON.stringify(doc), MODEL, 'rulesets/r/1.2.3.json'),
      (e: AppError) => /^Ruleset r 1\.2\.3 \(rulesets\/r\/1\.2\.3\.json\) does not compile: rule bad /.test(e.message),
    );
    assert.throws(
      () => loadRuleset('{', MODEL, 'models/rulesets/r/9.0.0.json'),
      (e: AppError) => e.message === 'The ruleset (models/rulesets/r/9.0.0.json) is not valid JSON.',
    );
    const schema = { name: 'r', version: '2.0.0', rules: [{ id: 'a', when: 'true', action: 'deny' }] };
    assert.throws(
      () => loadRuleset(JSON.stringify(schema), MODEL, 'f.json'),
      (e: AppError) => /^Ruleset r 2\.0\.0 \(f\.json\) is invalid: rules\.0\.action: /.test(e.message),
    );
  });

  it('rejects schema problems and failing golden cases, naming them', () => {
    const bad = rejection({ name: 'r', version: '1', rules: [{ id: 'a', when: 'true', action: 'deny' }] });
    assert.deepEqual(
      bad.errors.map((x) => x.path),
      ['rules.0.action'],
    );
    const golden = rejection({
      name: 'r',
      version: '1',
      rules: [{ id: 'big', when: 'event.amount > 100.0', action: 'block' }],
      golden: [{ name: 'small passes', event: { amount: 500 }, score: 0.01, expect: { decision: 'approve' } }],
    });
    assert.equal(golden.errors[0]?.path, 'golden.0');
    assert.match(golden.errors[0]?.message ?? '', /small passes.*expected decision approve, got decline/);
    assert.match(golden.message, /^1 golden case\(s\) of ruleset r 1 failed: golden case "small passes": expected/);
  });

  it('golden cases can expect evaluation errors and the fail-closed decision', () => {
    // `event.deviceId` is absent from the case's event: the rule errors at run time, and the payment fails closed
    const rules = [{ id: 'device', when: 'event.deviceId == "d-1"', action: 'block' }];
    const expecting = { name: 'no device', event: { amount: 5 }, score: 0.01 };
    const ok = loadRuleset(
      JSON.stringify({
        name: 'r',
        version: '1',
        rules,
        golden: [{ ...expecting, expect: { decision: 'review', errors: ['device'] } }],
      }),
      MODEL,
    );
    assert.equal(ok.document.golden[0]?.expect.errors[0], 'device');
    // the same case without saying so fails, and says which rule errored
    const unexpected = rejection({
      name: 'r',
      version: '1',
      rules,
      golden: [{ ...expecting, expect: { decision: 'review' } }],
    });
    assert.match(unexpected.errors[0]?.message ?? '', /expected evaluation errors in \[\], got \[device\]/);
    // expecting an error that does not happen fails too
    const missing = rejection({
      name: 'r',
      version: '1',
      rules,
      golden: [
        { ...expecting, event: { amount: 5, deviceId: 'd-2' }, expect: { decision: 'approve', errors: ['device'] } },
      ],
    });
    assert.match(missing.errors[0]?.message ?? '', /expected evaluation errors in \[device\], got \[\]/);
  });
});
