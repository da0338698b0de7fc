/**
 * Every body and query parser refuses a bad character with `validation_failed` naming the field, through the one
 * checker (lib/domain/text.ts): a table of (parser, input with NUL or a lone surrogate, the path). A Service Bus
 * message with one is a rejection with that reason (it goes to the rejected queue), never a failure retried.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { validateBatch } from '../../lib/async/validate-batch';
import { parseAssignBody, parseNoteBody, parseVerdictBody } from '../../lib/cases/case-requests';
import { parseAddBody } from '../../lib/decisioning/list-values';
import { AppError } from '../../lib/errors/errors';
import { parseAuditQuery } from '../../lib/governance/audit-query';
import { checkDocumentText, checkRouteVersion, parseComment, parseWindow } from '../../lib/governance/draft-bodies';
import { parseLabels } from '../../lib/learning/labels';
import { parseInferRequest, type ModelView } from '../../lib/oip/infer-request';
import { AdminBodies } from '../../lib/rollout/admin-bodies';
import { validEvent } from '../support/events';

const NUL = '\u0000';
const LONE = '\uDC00';
const query = (q: Record<string, string>): { get(n: string): string | null } => ({ get: (n) => q[n] ?? null });
const model: ModelView = {
  inputs: [{ name: 'x', datatype: 'FP32', dims: [undefined, 2] }],
  outputs: [{ name: 'y', datatype: 'FP32', dims: [undefined, 1] }],
};
const input = { name: 'x', shape: [1, 2], datatype: 'FP32', data: [1, 2] };
const label = { transactionId: 'tx-1', label: 'fraud', reportedAt: '2026-11-30T10:00:00Z' };
const admin = new AdminBodies(/^\d+\.\d+\.\d+$/, '1.2.0');

/** [what, the parse, the paths it must name]. */
const TABLE: [string, () => unknown, string[]][] = [
  ['note text', () => parseNoteBody({ text: `a${NUL}` }), ['text']],
  ['verdict reason', () => parseVerdictBody({ verdict: 'fraud', reason: `r${LONE}` }), ['reason']],
  ['assignee', () => parseAssignBody({ assignee: `bob\t` }), ['assignee']],
  ['draft comment', () => parseComment({ comment: `c${NUL}` }), ['comment']],
  ['draft comment, unknown field', () => parseComment({ comment: 'c', foo: 1 }), ['foo']],
  [
    'backtest window, unknown field',
    () => parseWindow({ from: '2026-11-01T00:00:00Z', to: '2026-11-02T00:00:00Z', foo: 1 }),
    ['foo'],
  ],
  [
    'drafted document',
    () => checkDocumentText({ rules: [{ id: 'r', description: `d${NUL}` }] }),
    ['rules.0.description'],
  ],
  ['version in the route', () => checkRouteVersion(`1.0${NUL}`), ['version']],
  ['list value', () => parseAddBody('userId', { values: ['ok', `u${NUL}`] }), ['values.1']],
  ['label', () => parseLabels({ labels: [label, { ...label, source: `s${NUL}` }] }), ['labels.1.source']],
  ['admin version', () => admin.version({ version: `1.2.0${NUL}` }), ['version']],
  ['admin candidate', () => admin.traffic({ candidate: `1.2.0${LONE}` }), ['candidate']],
  ['audit query', () => parseAuditQuery(query({ actor: `a${NUL}`, name: `n\n` })), ['name', 'actor']],
  ['OIP id', () => parseInferRequest({ id: `r${NUL}`, inputs: [input] }, model), ['id']],
  [
    'OIP parameter',
    () => parseInferRequest({ parameters: { k: `v${NUL}` }, inputs: [input] }, model),
    ['parameters.k'],
  ],
  [
    'OIP tensor parameter key',
    () => parseInferRequest({ inputs: [{ ...input, parameters: { [`k${NUL}`]: 1 } }] }, model),
    [`inputs.0.parameters.k${NUL}`],
  ],
];

describe('every parser refuses bad characters through the one checker', () => {
  for (const [what, parse, want] of TABLE)
    it(`${what}: validation_failed naming ${JSON.stringify(want)}`, () => {
      assert.throws(parse, (err: unknown) => {
        assert.ok(err instanceof AppError, String(err));
        assert.equal(err.code, 'validation_failed');
        assert.deepEqual(
          err.errors.map((e) => e.path),
          want,
        );
        return true;
      });
    });

  it('clean inputs still parse (tab, CR, LF in free text; a surrogate pair anywhere)', () => {
    assert.deepEqual(parseNoteBody({ text: 'line 1\r\n\tline 2 😀' }), { text: 'line 1\r\n\tline 2 😀' });
    assert.equal(parseComment({ comment: 'ok\nthanks' }), 'ok\nthanks');
    assert.equal(parseComment(null), undefined);
    assert.equal(parseComment({ comment: null }), undefined);
    assert.equal(parseAuditQuery(query({ actor: 'Zoë 😀' })).actor, 'Zoë 😀');
    assert.deepEqual(parseAddBody('userId', { values: ['u-😀'] }), { values: ['u-😀'] });
  });

  it('a Service Bus message with NUL or a lone surrogate is a rejection with the reason, naming the field', () => {
    const bodies = [
      JSON.stringify(validEvent({ transactionId: 'tx-1', note: `n${NUL}` })),
      Buffer.from(JSON.stringify(validEvent({ transactionId: 'tx-2', userId: `u${LONE}` })), 'utf8'),
      validEvent({ transactionId: 'tx-3', merchantId: `m${NUL}` }),
      JSON.stringify(validEvent({ transactionId: 'tx-4' })),
    ];
    const out = validateBatch(
      bodies.map((body, i) => ({ body, meta: { messageId: `m-${i}` } })),
      () => 0,
    );
    assert.deepEqual([...out.events.keys()], [3]);
    assert.equal(out.failures.size, 0, 'nothing retried');
    const rejected = [...out.rejected].map(([i, r]) => [i, r.reason, r.errors.map((e) => e.path)]);
    assert.deepEqual(rejected, [
      [0, 'validation_failed', ['note']],
      [1, 'validation_failed', ['userId']], // JSON.stringify escapes it (`\udc00`): the bytes carry it intact
      [2, 'validation_failed', ['merchantId']],
    ]);
  });
});
