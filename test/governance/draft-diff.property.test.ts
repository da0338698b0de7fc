/**
 * A draft's diff against the serving version (lib/governance/draft-diff.ts): the line diff's kept and removed lines
 * are the old text, its kept and added lines the new one, and it keeps as many lines as a longest common
 * subsequence (checked against a brute-force LCS on small inputs); per rule, the known answer of a changed
 * expression, an added and a removed rule, and another field.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { diffDocuments, diffLines, MAX_DIFF_LINES, ruleLines, type DiffLine } from '../../lib/governance/draft-diff';

const before = (d: readonly DiffLine[]): string[] => d.filter((l) => l.op !== 'add').map((l) => l.text);
const afterOf = (d: readonly DiffLine[]): string[] => d.filter((l) => l.op !== 'del').map((l) => l.text);

/** The LCS length by brute force over the subsequences of `a` (small `a` only). */
function bruteLcs(a: readonly string[], b: readonly string[]): number {
  let best = 0;
  for (let mask = 0; mask < 1 << a.length; mask++) {
    const sub = a.filter((_, i) => (mask & (1 << i)) !== 0);
    if (sub.length <= best) continue;
    let j = 0;
    for (const x of b) if (j < sub.length && sub[j] === x) j++;
    if (j === sub.length) best = sub.length;
  }
  return best;
}

const lines = (max: number) => fc.array(fc.constantFrom('a', 'b', 'c', 'd', '  when: x', ''), { maxLength: max });

describe('the line diff', () => {
  it('its kept and removed lines are the old text, its kept and added lines the new one', () => {
    fc.assert(
      fc.property(lines(40), lines(40), (a, b) => {
        const d = diffLines(a, b);
        assert.deepEqual(before(d), a);
        assert.deepEqual(afterOf(d), b);
      }),
    );
  });

  it('keeps as many lines as a longest common subsequence', () => {
    fc.assert(
      fc.property(lines(10), lines(12), (a, b) => {
        assert.equal(diffLines(a, b).filter((l) => l.op === 'same').length, bruteLcs(a, b));
      }),
    );
  });

  it('a text against itself is all kept; beyond the bound the middle is removed then added', () => {
    fc.assert(fc.property(lines(30), (a) => assert.ok(diffLines(a, a).every((l) => l.op === 'same'))));
    const big = Array.from({ length: MAX_DIFF_LINES + 1 }, (_, i) => `x${i}`);
    const other = ['head', ...big.map((x) => `${x}!`), 'tail'];
    const d = diffLines(['head', ...big, 'tail'], other);
    assert.deepEqual(before(d), ['head', ...big, 'tail']);
    assert.deepEqual(afterOf(d), other);
    assert.deepEqual(d[0], { op: 'same', text: 'head' });
    assert.equal(d[1]?.op, 'del');
  });
});

describe('a draft against the serving version', () => {
  const serving = {
    name: 'fraud-rules',
    version: '1.0.0',
    lists: [{ name: 'blocked_users', key: 'userId' }],
    rules: [
      { id: 'keep', when: 'event.amount > 10', action: 'review' },
      { id: 'edit', when: 'event.amount > 1000 &&\nfeatures.new_device == 1', action: 'review' },
      { id: 'gone', when: 'event.country == "XX"', action: 'block' },
    ],
  };
  const draft = {
    ...serving,
    version: '1.1.0',
    lists: [...serving.lists, { name: 'blocked_devices', key: 'deviceId' }],
    rules: [
      { id: 'keep', when: 'event.amount > 10', action: 'review' },
      { id: 'edit', when: 'event.amount > 500 &&\nfeatures.new_device == 1', action: 'review' },
      { id: 'new', when: 'event.merchantId == "m-bad"', action: 'block' },
    ],
  };

  it('names each rule added, removed or changed, with the changed expression lines; counts the others', () => {
    const d = diffDocuments(serving, draft);
    assert.deepEqual(
      d.rules.map((r) => [r.id, r.change]),
      [
        ['edit', 'changed'],
        ['new', 'added'],
        ['gone', 'removed'],
      ],
    );
    assert.equal(d.unchanged, 1);
    const edit = d.rules[0]?.lines.filter((l) => l.op !== 'same');
    assert.deepEqual(edit, [
      { op: 'del', text: 'when: event.amount > 1000 &&' },
      { op: 'add', text: 'when: event.amount > 500 &&' },
    ]);
    assert.ok(d.rules[1]?.lines.every((l) => l.op === 'add'));
    assert.ok(d.rules[2]?.lines.every((l) => l.op === 'del'));
    assert.deepEqual(
      d.fields.map((f) => f.field),
      ['lists'],
      'the version is not a change',
    );
    assert.deepEqual(ruleLines(serving.rules[1]), [
      'id: "edit"',
      'when: event.amount > 1000 &&',
      '      features.new_device == 1',
      'action: "review"',
    ]);
  });

  it('the order of keys is no change (PostgreSQL keeps a document as jsonb, which reorders them)', () => {
    const reversed = (v: unknown): unknown =>
      Array.isArray(v)
        ? v.map(reversed)
        : typeof v === 'object' && v !== null
          ? Object.fromEntries(
              Object.entries(v)
                .reverse()
                .map(([k, x]) => [k, reversed(x)]),
            )
          : v;
    const d = diffDocuments(serving, reversed(serving));
    assert.deepEqual([d.rules, d.fields, d.unchanged], [[], [], 3]);
    fc.assert(fc.property(fc.jsonValue(), (a) => assert.deepEqual(diffDocuments(a, reversed(a)).rules, [])));
  });

  it('a document against itself changes nothing; any document diffs without throwing', () => {
    const same = diffDocuments(serving, serving);
    assert.deepEqual([same.rules, same.fields, same.unchanged], [[], [], 3]);
    fc.assert(fc.property(fc.jsonValue(), fc.jsonValue(), (a, b) => void diffDocuments(a, b)));
  });
});
