import assert from 'node:assert/strict';
import { after, afterEach, before, describe, it } from 'node:test';
import { FakeOpenAI } from '../support/openai-peer';
import { deep, escalatorFor, event, localResult } from './support/escalator';

describe('escalation through the real openai AzureOpenAI client against a loopback chat-completions server', () => {
  let fake: FakeOpenAI;
  before(async () => (fake = await FakeOpenAI.create()));
  after(() => fake.close());
  afterEach(() => {
    fake.set({ mode: 'ok', delayMs: 0, stallMs: 5000, retryAfterSec: 60 });
    fake.requests.length = 0;
    fake.count = 0;
  });

  it('a valid answer: the stricter decision wins, both are shown, tokens and cost are reported', async () => {
    const { escalator, events } = escalatorFor(fake, {
      ESCALATION_PRICE_PROMPT_PER_1K_USD: '0.5',
      ESCALATION_PRICE_COMPLETION_PER_1K_USD: '2',
    });
    const local = localResult({ decision: 'review', score: 0.55 });
    const r = await escalator.review(deep(), local);
    assert.equal(r.source, 'openai');
    assert.equal(r.decision, 'decline', 'high risk from the LLM beats the local review');
    assert.equal(r.score, 0.55, 'the score stays the local model’s');
    const x = r.escalation;
    assert.ok(x !== undefined);
    assert.equal(x.outcome, 'ok');
    assert.equal(x.localDecision, 'review');
    assert.deepEqual(x.llm, {
      riskLevel: 'high',
      score: 0.91,
      reasons: ['note asks to bypass checks'],
      decision: 'decline',
    });
    assert.equal(x.model, 'gpt-4o-mini-2024-07-18');
    assert.deepEqual(x.triggers, ['band', 'requested']);
    assert.ok(x.tokens.prompt > 0 && x.tokens.completion > 0);
    assert.equal(
      x.costUsd,
      Math.round(((x.tokens.prompt / 1000) * 0.5 + (x.tokens.completion / 1000) * 2) * 1e8) / 1e8,
    );
    assert.equal(x.reason, undefined);
    assert.equal(events.escalated[0]?.costUsd, x.costUsd);
    const req = fake.requests[0];
    assert.ok(req !== undefined);
    assert.equal(req.deployment, 'gpt-4o-mini');
    assert.equal(req.apiVersion, '2024-10-21');
    assert.equal(req.headers['api-key'], 'test-api-key');
    assert.equal(req.headers['authorization'], undefined, 'a key and a token are never both sent');
    const body = JSON.parse(req.body) as {
      response_format: { type: string; json_schema: { strict: boolean; name: string } };
    };
    assert.equal(body.response_format.type, 'json_schema');
    assert.equal(body.response_format.json_schema.strict, true);
  });

  it('a low-risk verdict never loosens the local decision', async () => {
    fake.set({ verdict: { riskLevel: 'low', score: 0.02, reasons: [] } });
    const { escalator } = escalatorFor(fake);
    const r = await escalator.review(deep(), localResult({ decision: 'review', score: 0.5 }));
    assert.equal(r.source, 'openai');
    assert.equal(r.decision, 'review');
    assert.equal(r.escalation?.llm?.decision, 'approve');
  });

  it('an answer slower than the budget falls back to the local result', async () => {
    fake.set({ delayMs: 3000 });
    const { escalator } = escalatorFor(fake, { ESCALATION_TIMEOUT_MS: '100' });
    const local = localResult({ decision: 'review' });
    const r = await escalator.review(deep(), local);
    assert.equal(r.source, 'local-fallback');
    assert.equal(r.decision, 'review');
    assert.equal(r.escalation?.outcome, 'timeout');
    assert.equal(r.escalation?.reason, 'the escalation budget expired');
  });

  it('a body that stalls after the headers also ends at the budget (the SDK timeout would not, #1825)', async () => {
    fake.set({ mode: 'slow-body', stallMs: 3000 });
    const { escalator } = escalatorFor(fake, { ESCALATION_TIMEOUT_MS: '150' });
    const r = await escalator.review(deep(), localResult());
    assert.equal(r.escalation?.outcome, 'timeout');
    assert.equal(r.source, 'local-fallback');
  });

  it('a 429 with Retry-After falls back, is not retried, and reports rate_limited', async () => {
    fake.set({ mode: 'rate-limit', retryAfterSec: 1 });
    const { escalator } = escalatorFor(fake);
    const r = await escalator.review(deep(), localResult());
    assert.equal(r.source, 'local-fallback');
    assert.equal(r.escalation?.outcome, 'rate_limited');
    assert.equal(fake.count, 1, 'maxRetries 0: one request');
  });

  it('a 500 falls back after exactly one request', async () => {
    fake.set({ mode: 'server-error' });
    const { escalator } = escalatorFor(fake);
    const r = await escalator.review(deep(), localResult());
    assert.equal(r.escalation?.outcome, 'server_error');
    assert.equal(r.escalation?.reason, 'server error (500)');
    assert.equal(fake.count, 1);
  });

  for (const [mode, outcome] of [
    ['malformed-json', 'invalid_output'],
    ['bad-content', 'invalid_output'],
    ['schema-violation', 'invalid_output'],
    ['length', 'invalid_output'],
    ['refusal', 'refused'],
    ['content-filter', 'refused'],
  ] as const) {
    it(`${mode}: falls back with outcome ${outcome}`, async () => {
      fake.set({ mode });
      const { escalator, events } = escalatorFor(fake);
      const local = localResult({ decision: 'review', score: 0.6 });
      const r = await escalator.review(deep(), local);
      assert.equal(r.source, 'local-fallback');
      assert.equal(r.escalation?.outcome, outcome);
      assert.equal(r.decision, 'review');
      assert.equal(r.escalation?.llm, undefined);
      assert.equal(events.escalated[0]?.outcome, outcome);
    });
  }

  it('a refusal still reports the tokens it used', async () => {
    fake.set({ mode: 'refusal' });
    const { escalator } = escalatorFor(fake);
    const r = await escalator.review(deep(), localResult());
    assert.ok((r.escalation?.tokens.prompt ?? 0) > 0);
    assert.ok((r.escalation?.costUsd ?? 0) > 0);
  });

  it('a payment that does not escalate returns the local result itself and sends nothing', async () => {
    const { escalator, events } = escalatorFor(fake);
    const local = localResult({ decision: 'approve' });
    const r = await escalator.review(event({ note: 'short note' }), local);
    assert.equal(r, local);
    assert.equal(fake.count, 0);
    assert.equal(events.escalated.length, 0);
  });

  it('the prompt that reaches the server holds no raw userId and no card number, and the note is cut', async () => {
    const { escalator } = escalatorFor(fake, { ESCALATION_NOTE_MAX_CHARS: '300' });
    const card = '4111 1111 1111 1111';
    const note =
      `Customer user-secret-77 says card ${card} (also 4111111111111111) was used. ` + 'x'.repeat(600) + 'TAIL';
    await escalator.review(
      deep({ userId: 'user-secret-77', note, deviceId: 'dev-secret', merchantId: 'm-secret' }),
      localResult(),
    );
    const wire = fake.requests[0]?.body ?? '';
    assert.ok(wire.length > 0);
    for (const secret of ['user-secret-77', '4111', 'dev-secret', 'm-secret', 'tx-0001', 'TAIL'])
      assert.ok(!wire.includes(secret), `${secret} must not reach the server`);
    assert.match(wire, /u_[0-9a-f]{16}/);
    assert.match(wire, /\[number\]/);
  });
});
