import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { http } from '../support/http';
import { hostWithoutRedis } from '../support/suite-host';
import { validEvent } from '../support/events';

const EXAMPLES = path.resolve(__dirname, '../../../examples');
const example = (name: string): string => readFileSync(path.join(EXAMPLES, name), 'utf8');

describe('HTTP contract over the local host', () => {
  const suite = hostWithoutRedis();

  it('registers the functions through the real programming model', () => {
    const byName = new Map(suite.host.functions.map((f) => [f.name, f]));
    assert.deepEqual(byName.get('score')?.methods, ['POST']);
    assert.equal(byName.get('score')?.route, 'score');
    assert.equal((byName.get('score')?.trigger as { authLevel?: string }).authLevel, 'function');
    assert.equal(byName.get('healthReady')?.route, 'health/ready');
    assert.equal(byName.get('healthLive')?.route, 'health/live');
  });

  it('is live and ready (sample inference) once the model is warm', async () => {
    const live = await fetch(`${suite.api}/health/live`);
    assert.equal(live.status, 200);
    const ready = await fetch(`${suite.api}/health/ready`);
    assert.equal(ready.status, 200);
    const body = (await ready.json()) as { status: string; model: { name: string; version: string } };
    assert.deepEqual(Object.keys(body).sort(), ['model', 'status'], 'status and model only');
    assert.deepEqual(Object.keys(body.model).sort(), ['name', 'version']);
    assert.equal(body.status, 'ready');
    assert.equal(body.model.name, 'fraud');
    assert.match(body.model.version, /^\d+\.\d+\.\d+$/);
    const detail = (await (await fetch(`${suite.api}/models/health`)).json()) as { executionProviders: string[] };
    assert.deepEqual(detail.executionProviders, ['cpu']);
  });

  it('scores the example payment', async () => {
    const r = await http().post(`${suite.api}/score`, example('payment.json'));
    assert.equal(r.status, 200);
    assert.equal(r.headers.get('content-type'), 'application/json');
    assert.equal(r.json['transactionId'], 'tx-20261130-0001');
    const score = r.json['score'] as number;
    assert.ok(score >= 0 && score <= 1);
    assert.ok(['approve', 'review', 'decline'].includes(r.json['decision'] as string));
    assert.equal(r.json['source'], 'local');
    assert.deepEqual(r.json['model'], { name: 'fraud', version: r.headers.get('x-model-version') });
    assert.ok(Array.isArray(r.json['reasons']));
  });

  it('ranks a risky payment above an ordinary one, with reasons that name the risk', async () => {
    const ok = await http().post(`${suite.api}/score`, example('payment.json'));
    const risky = await http().post(`${suite.api}/score`, example('payment-risky.json'));
    assert.ok((risky.json['score'] as number) > (ok.json['score'] as number));
    assert.notEqual(risky.json['decision'], 'approve');
    const codes = (risky.json['reasons'] as { code: string }[]).map((r) => r.code);
    assert.ok(codes.includes('amount_vs_usual') || codes.includes('ip_country_mismatch'), codes.join(','));
  });

  it('answers 400 problem+json naming every invalid field', async () => {
    const r = await http().post(`${suite.api}/score`, example('payment-invalid.json'));
    assert.equal(r.status, 400);
    assert.equal(r.headers.get('content-type'), 'application/problem+json');
    assert.equal(r.json['code'], 'validation_failed');
    assert.equal(r.json['status'], 400);
    const paths = (r.json['errors'] as { path: string }[]).map((e) => e.path).sort();
    assert.deepEqual(paths, [
      'amount',
      'cardNumber',
      'channel',
      'country',
      'currency',
      'merchantCategory',
      'timestamp',
      'transactionId',
    ]);
    assert.ok(!JSON.stringify(r.json).includes('4111111111111111'), 'never echoes payment data');
  });

  it('answers 400 for malformed JSON', async () => {
    const r = await http().post(`${suite.api}/score`, '{"transactionId": ');
    assert.equal(r.status, 400);
    assert.equal(r.json['code'], 'invalid_json');
  });

  it('answers 413 for a body over 64 KiB', async () => {
    const r = await http().post(`${suite.api}/score`, JSON.stringify(validEvent({ note: 'x'.repeat(70 * 1024) })));
    assert.equal(r.status, 413);
    assert.equal(r.headers.get('content-type'), 'application/problem+json');
    assert.equal(r.json['code'], 'payload_too_large');
  });

  it('answers 415 when the body is not JSON', async () => {
    for (const ct of ['text/plain', 'application/x-www-form-urlencoded']) {
      const r = await http().post(`${suite.api}/score`, JSON.stringify(validEvent()), {
        headers: { 'content-type': ct },
      });
      assert.equal(r.status, 415, ct);
      assert.equal(r.json['code'], 'unsupported_media_type');
    }
    const none = await fetch(`${suite.api}/score`, { method: 'POST', body: new Uint8Array([1, 2, 3]) });
    assert.equal(none.status, 415);
  });

  it('never answers 500 to hostile input', async () => {
    const bodies = [
      'null',
      '[]',
      '"str"',
      '1e400',
      '{"__proto__": {"x": 1}}',
      JSON.stringify({ ...validEvent(), amount: 'NaN' }),
      '\u0000',
    ];
    for (const b of bodies) {
      const r = await http().post(`${suite.api}/score`, b);
      assert.equal(r.status, 400, b);
    }
  });
});
