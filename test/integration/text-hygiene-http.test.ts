/**
 * Bad bytes and unknown fields under `npm start` (PGlite, the development identity; issue 36 items 2 and 4): NUL,
 * control characters and lone surrogates in any string of a body or a query are a 400 `validation_failed`
 * naming the field (never a 503 from PostgreSQL, never a payment scored and its case lost), and a body with an
 * unknown field is refused on every body route, naming it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import { encodePrincipal } from '../../lib/identity/principal';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { eventually } from '../support/eventually';
import { startCaseHost, type LocalHost } from '../support/local-host';

const SHIPPED = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');
const LEAD = { 'x-ms-client-principal': encodePrincipal('lead-a', ['analyst', 'lead']) };

/** A payment the shipped ruleset reviews: 1000 or more from a device the user has not used before. */
function reviewed(tx: string, overrides: Record<string, unknown> = {}): Record<string, unknown> {
  return validEvent({ transactionId: tx, userId: `user-${tx}`, amount: 2500, deviceId: `dev-new-${tx}`, ...overrides });
}

interface Answer {
  readonly status: number;
  readonly contentType: string | null;
  readonly json: Record<string, unknown>;
}

/** The paths a problem names (`errors[].path`). */
const paths = (a: Answer): string[] => ((a.json['errors'] ?? []) as { path: string }[]).map((e) => e.path);

describe('bad bytes and unknown fields under npm start', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-text-hygiene-'));
  let host: LocalHost;
  const call = async (method: string, route: string, body?: unknown): Promise<Answer> => {
    const res = await fetch(`${host.url}/${route}`, {
      method,
      headers: { 'content-type': 'application/json', ...LEAD },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    const text = await res.text();
    return {
      status: res.status,
      contentType: res.headers.get('content-type'),
      json: text === '' ? {} : JSON.parse(text),
    };
  };
  const post = (route: string, body: unknown): Promise<Answer> => call('POST', route, body);
  const refused = (a: Answer, field: string, what: string): void => {
    assert.equal(a.status, 400, `${what}: ${JSON.stringify(a.json)}`);
    assert.equal(a.contentType, 'application/problem+json', what);
    assert.equal(a.json['code'], 'validation_failed', what);
    assert.deepEqual(paths(a), [field], what);
  };

  before(async () => {
    host = await startCaseHost(dir);
  });
  after(async () => {
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    rmSync(dir, { recursive: true, force: true });
  });

  it('NUL in every string field of /api/score is a 400 naming that field; tab and LF in the note are text', async () => {
    const event = validEvent({ cardFingerprint: 'fp-1', note: 'n', analysis: 'deep' });
    const fields = Object.keys(event).filter((k) => typeof event[k] === 'string');
    assert.ok(fields.length >= 13, fields.join());
    for (const field of fields)
      refused(await post('score', { ...event, [field]: `${String(event[field])}\u0000` }), field, `NUL in ${field}`);
    refused(await post('score', validEvent({ userId: 'u\tx' })), 'userId', 'tab in an id');
    refused(await post('score', validEvent({ note: 'a\u001bb' })), 'note', 'ESC in the note');
    refused(await post('score', validEvent({ note: 'a\u0085b' })), 'note', 'C1 in the note');
    refused(await post('score', validEvent({ note: 'a\uD800b' })), 'note', 'a lone surrogate in the note');
    const ok = await post('score', validEvent({ transactionId: 'tx-text-ok', note: 'line 1\n\tline 2\r\n' }));
    assert.equal(ok.status, 200, JSON.stringify(ok.json));
  });

  it('a batch names the event and field with NUL, and scores the others', async () => {
    const r = await post('score/batch', {
      events: [validEvent({ transactionId: 'tx-b-1' }), validEvent({ transactionId: 'tx-b-2', deviceId: 'd\u0000' })],
    });
    assert.equal(r.status, 200);
    const results = r.json['results'] as Record<string, unknown>[];
    assert.equal(typeof results[0]?.['score'], 'number');
    const problem = results[1]?.['error'] as { code: string; errors: { path: string }[] };
    assert.equal(problem.code, 'validation_failed');
    assert.deepEqual(
      problem.errors.map((e) => e.path),
      ['events.1.deviceId'],
    );
  });

  it('a review with NUL in its note is refused, and the cases of the reviews beside it all open', async () => {
    refused(await post('score', reviewed('tx-nul-note', { note: 'x\u0000' })), 'note', 'NUL note of a review');
    for (const tx of ['tx-hyg-1', 'tx-hyg-2', 'tx-hyg-3'])
      assert.equal((await post('score', reviewed(tx, { note: 'tab\tok' }))).status, 200, tx);
    const open = await eventually(
      async () =>
        ((await call('GET', 'cases?status=open&order=oldest')).json['cases'] ?? []) as { transactionId: string }[],
      (cs) => ['tx-hyg-1', 'tx-hyg-2', 'tx-hyg-3'].every((tx) => cs.some((c) => c.transactionId === tx)),
      'the three cases beside the refused payment',
    );
    assert.ok(!open.some((c) => c.transactionId === 'tx-nul-note'));
  });

  it('NUL in a note, a verdict reason, an assignee and a draft comment is a 400 naming the field, not a 503', async () => {
    refused(await post('cases/1/notes', { text: 'called\u0000' }), 'text', 'note');
    refused(await post('cases/1/verdict', { verdict: 'fraud', reason: 'r\u0000' }), 'reason', 'verdict reason');
    refused(await post('cases/1/assign', { assignee: 'bob\u0000' }), 'assignee', 'assignee');
    for (const action of ['submit', 'approve', 'reject'])
      refused(await post(`rulesets/fraud-rules/drafts/1.9.0/${action}`, { comment: 'c\u0000' }), 'comment', action);
    const doc = JSON.parse(readFileSync(SHIPPED, 'utf8')) as { version: string; rules: { description: string }[] };
    doc.version = '1.9.0';
    (doc.rules[0] as { description: string }).description = 'bad\u0000';
    refused(await post('rulesets/fraud-rules/drafts', doc), 'rules.0.description', 'a drafted document');
    refused(await call('GET', 'rulesets/fraud-rules/drafts/1.9%00'), 'version', 'a version in the route');
    refused(
      await post('labels', {
        labels: [{ transactionId: 't\u0000', label: 'fraud', reportedAt: '2026-11-30T10:00:00Z' }],
      }),
      'labels.0.transactionId',
      'label',
    );
    refused(await post('lists/blocked_users', { values: ['u-ok', 'u\u0000'] }), 'values.1', 'list value');
    refused(await post('rulesets/fraud-rules/promote', { version: '1.0.0\u0000' }), 'version', 'admin body');
  });

  it('NUL in a query parameter is a 400 naming it', async () => {
    refused(await call('GET', 'audit?actor=al%00ice'), 'actor', 'audit actor');
    refused(await call('GET', 'audit?name=%0Afraud-rules'), 'name', 'audit name');
    refused(await call('GET', 'cases?merchantId=m%00'), 'merchantId', 'case filter');
  });

  it('an unknown field is refused on every body route, naming it', async () => {
    const ruleset = JSON.parse(readFileSync(SHIPPED, 'utf8')) as Record<string, unknown>;
    const window = { from: '2026-11-01T00:00:00Z', to: '2026-11-30T00:00:00Z' };
    const label = { transactionId: 'tx-1', label: 'fraud', reportedAt: '2026-11-30T10:00:00Z' };
    const rows = [Array.from({ length: FEATURE_COUNT }, () => 0.5)];
    const infer = { inputs: [{ name: 'features', shape: [1, FEATURE_COUNT], datatype: 'FP32', data: rows.flat() }] };
    // [route, a valid body, the status of the refusal]
    const table: [string, Record<string, unknown>, number][] = [
      ['score', validEvent(), 400],
      ['score/batch', { events: [validEvent()] }, 400],
      ['labels', { labels: [label] }, 400],
      ['lists/blocked_users', { values: ['u-x'] }, 400],
      ['models/fraud/promote', { version: '1.0.0' }, 400],
      ['models/fraud/traffic', { candidate: '1.0.0', canaryPercent: 0 }, 400],
      ['rulesets/fraud-rules/promote', { version: '1.0.0' }, 400],
      ['rulesets/fraud-rules/traffic', { candidate: '1.0.0', canaryPercent: 0 }, 400],
      // a drafted document is checked as an upload is: a schema error is 422 ruleset_invalid, naming the field
      ['rulesets/fraud-rules/drafts', { ...ruleset, version: '1.9.1' }, 422],
      ['rulesets/fraud-rules/drafts/1.9.1/backtest', window, 400],
      ['rulesets/fraud-rules/drafts/1.9.1/submit', { comment: 'please' }, 400],
      ['rulesets/fraud-rules/drafts/1.9.1/approve', { comment: 'ok' }, 400],
      ['rulesets/fraud-rules/drafts/1.9.1/reject', { comment: 'no' }, 400],
      ['cases/1/notes', { text: 'called' }, 400],
      ['cases/1/verdict', { verdict: 'legit', reason: 'ok' }, 400],
      ['cases/1/assign', { assignee: 'bob' }, 400],
      ['v2/models/fraud/infer', infer, 400],
    ];
    for (const [route, body, status] of table) {
      const r = await call(route.endsWith('/traffic') ? 'PUT' : 'POST', route, { ...body, foo: 1 });
      assert.equal(r.status, status, `${route}: ${JSON.stringify(r.json)}`);
      if (route.startsWith('v2/')) assert.match(String(r.json['error']), /\bfoo: unknown field\b/, route);
      else assert.ok(paths(r).includes('foo'), `${route} names foo: ${JSON.stringify(r.json)}`);
    }
  });
});
