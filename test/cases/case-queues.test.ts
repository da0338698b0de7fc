/**
 * The queues document (lib/cases/case-queues.ts): parsed strictly, compiled once; the first queue whose `when`
 * holds wins, else the default; a bad expression is refused naming the queue and the column; the example file
 * compiles; a file that cannot be read or parsed fails naming it. Property: any decision is routed to a declared
 * queue, never a throw.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { compileQueues, DEFAULT_QUEUES, loadQueues } from '../../lib/cases/case-queues';
import { AppError } from '../../lib/errors/errors';
import { newCase } from './support';

const EXAMPLE = path.resolve(__dirname, '../../../examples/queues.json');

const DOC = {
  queues: [
    { name: 'velocity', slaHours: 2, when: '"velocity-burst" in rules' },
    { name: 'big', slaHours: 4, when: 'amount >= 5000.0 && currency == "EUR"' },
    { name: 'merchant-7', slaHours: 1.5, when: 'merchantId == "m-7" && has_score && score >= 0.5' },
    { name: 'general', slaHours: 24 },
  ],
  default: 'general',
};

function refused(fn: () => unknown): { path: string; message: string; column?: number }[] {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof AppError && err.code === 'config_invalid', `unexpected ${String(err)}`);
    return err.errors.map((e) => ({
      path: e.path,
      message: e.message,
      ...(e.column === undefined ? {} : { column: e.column }),
    }));
  }
  assert.fail('accepted');
}

describe('queues document', () => {
  const router = compileQueues(DOC);
  const rules = (...ids: string[]): { id: string; action: string }[] => ids.map((id) => ({ id, action: 'review' }));

  it('routes by rule, amount, merchant and score; the first matching queue wins; else the default', () => {
    const at = Date.parse('2026-12-01T08:00:00Z');
    assert.deepEqual(router.route(newCase('a', at, { rules: rules('velocity-burst') })), {
      queue: 'velocity',
      slaHours: 2,
    });
    assert.deepEqual(
      router.route(newCase('b', at, { rules: rules('velocity-burst') }, { amount: 9000 })),
      { queue: 'velocity', slaHours: 2 },
      'the first matching queue wins',
    );
    assert.equal(router.route(newCase('c', at, {}, { amount: 9000 })).queue, 'big');
    assert.equal(router.route(newCase('d', at, {}, { amount: 9000, currency: 'USD' })).queue, 'general');
    assert.equal(router.route(newCase('e', at, { score: 0.6 }, { merchantId: 'm-7' })).queue, 'merchant-7');
    assert.equal(router.route(newCase('f', at, { score: null }, { merchantId: 'm-7' })).queue, 'general', 'no score');
    assert.equal(router.route(newCase('g', at)).queue, 'general');
    assert.deepEqual(
      router.queues.map((q) => q.queue),
      ['velocity', 'big', 'merchant-7', 'general'],
    );
  });

  it('an expression that fails on a case does not match; routing moves on', () => {
    const r = compileQueues({
      queues: [
        { name: 'third-rule', slaHours: 1, when: 'rules[2] == "x"' },
        { name: 'general', slaHours: 24 },
      ],
      default: 'general',
    });
    assert.equal(r.route(newCase('z', 0)).queue, 'general', 'one rule fired: rules[2] fails');
    const three = ['a', 'b', 'x'].map((id) => ({ id, action: 'review' }));
    assert.equal(r.route(newCase('z', 0, { rules: three })).queue, 'third-rule');
  });

  it('property: any decision goes to a declared queue, never a throw', () => {
    const names = new Set(router.queues.map((q) => q.queue));
    fc.assert(
      fc.property(
        fc.array(fc.constantFrom('velocity-burst', 'large-amount-new-device', 'x'), { maxLength: 4 }),
        fc.double({ noNaN: false }),
        fc.option(fc.double({ min: 0, max: 1 })),
        fc.string({ maxLength: 8 }),
        (ids, amount, score, merchantId) => {
          const q = router.route(newCase('p', 0, { rules: rules(...ids), score }, { amount, merchantId }));
          assert.ok(names.has(q.queue), q.queue);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('refuses a bad expression naming the queue, its path and the column; every bad one at once', () => {
    const errors = refused(() =>
      compileQueues({
        queues: [
          { name: 'a', slaHours: 1, when: 'amount >= ' },
          { name: 'b', slaHours: 1, when: 'merchantId == 3' },
          { name: 'c', slaHours: 1, when: 'amount' },
          { name: 'general', slaHours: 24 },
        ],
        default: 'general',
      }),
    );
    assert.deepEqual(
      errors.map((e) => [e.path, e.column]),
      [
        ['queues.0.when', 11],
        ['queues.1.when', 1],
        ['queues.2.when', 1],
      ],
    );
    assert.match(errors[0]?.message ?? '', /^queue a: column 11: /);
    assert.match(errors[1]?.message ?? '', /^queue b: column 1: no such overload/);
    assert.match(errors[2]?.message ?? '', /^queue c: column 1: the expression must be a bool, not double/);
  });

  it('is strict: unknown fields, a duplicate name, a default that is no queue, a bad SLA are refused by path', () => {
    const paths = refused(() =>
      compileQueues({
        queues: [
          { name: 'a', slaHours: 0, extra: true },
          { name: 'a', slaHours: 1 },
          { name: '9bad', slaHours: 1 },
        ],
        default: 'nope',
        more: 1,
      }),
    ).map((e) => e.path);
    for (const p of ['queues.0.extra', 'queues.0.slaHours', 'queues.2.name', 'more'])
      assert.ok(paths.includes(p), `${p} in ${paths.join(', ')}`);
    assert.deepEqual(
      refused(() =>
        compileQueues({
          queues: [
            { name: 'a', slaHours: 1 },
            { name: 'a', slaHours: 1 },
          ],
          default: 'b',
        }),
      ).map((e) => e.path),
      ['queues.1.name', 'default'],
    );
    assert.deepEqual(
      refused(() => compileQueues({ queues: [], default: 'a' })).map((e) => e.path),
      ['queues'],
    );
  });

  it('loads the example file and the built-in default; a missing or non-JSON file fails naming it', async () => {
    const example = await loadQueues(EXAMPLE);
    assert.deepEqual(
      example.queues.map((q) => q.queue),
      ['velocity', 'high-value', 'new-device', 'general'],
    );
    assert.equal(
      example.route(newCase('n', 0, { rules: [{ id: 'large-amount-new-device', action: 'review' }] }, { amount: 2500 }))
        .queue,
      'new-device',
    );
    assert.deepEqual((await loadQueues(undefined)).queues, [{ queue: 'general', slaHours: 24 }]);
    assert.deepEqual(DEFAULT_QUEUES.default, 'general');
    const dir = mkdtempSync(path.join(tmpdir(), 'test-queues-'));
    try {
      const file = path.join(dir, 'queues.json');
      await assert.rejects(loadQueues(file), (e) => e instanceof AppError && e.message.includes(file));
      writeFileSync(file, '{ not json');
      await assert.rejects(loadQueues(file), (e) => e instanceof AppError && /is not JSON/.test(e.message));
      writeFileSync(file, JSON.stringify({ queues: [{ name: 'x', slaHours: 1, when: 'nope(' }], default: 'x' }));
      await assert.rejects(
        loadQueues(file),
        (e) => e instanceof AppError && e.code === 'config_invalid' && e.errors[0]?.path === 'queues.0.when',
      );
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
