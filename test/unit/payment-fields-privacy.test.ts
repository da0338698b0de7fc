/**
 * The fraud-signal fields outside the decision: the escalation prompt never holds the email, IP address, card,
 * addresses, user agent or metadata (nor the email or IP written in the note), log lines redact their keys, and
 * rules see them as `event.email`, `event.card.bin`, `event.metadata.<key>`…
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { celEnvironment } from '../../lib/decisioning/cel-environment';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { buildPrompt, scrubNote } from '../../lib/escalation/prompt';
import type { ScoreResult } from '../../lib/scoring/scorer';
import { createJsonLogger } from '../../lib/platform/logger';
import { RICH, richEvent } from '../support/rich-event';

const local = {
  transactionId: 'tx-0001',
  score: 0.5,
  decision: 'review',
  reasons: [{ code: 'amount_log', contribution: 0.4, description: 'log of the amount' }],
  model: { name: 'fraud', version: '1.0.0' },
  source: 'local',
  cache: 'miss',
  timing: { queueMs: 0.1, inferenceMs: 0.2, batchSize: 1 },
} as unknown as ScoreResult;

/** Every raw personal value of {@link richEvent}, in the spellings a leak could take. */
const RAW = [
  RICH.email,
  RICH.email.toLowerCase(),
  'Jane.Doe',
  RICH.ipAddress,
  '2001:db8::1',
  RICH.fingerprint,
  RICH.userAgent,
  'AppleWebKit',
  '75011',
  '10115',
  '411111',
  'black-friday',
];

describe('fraud-signal fields never reach the prompt or the logs', () => {
  it('the escalation prompt holds none of them, even written in the note', () => {
    const note = `Customer ${RICH.email} (ip ${RICH.ipAddress}, also 2001:db8::1, 203.0.113.7) token ${RICH.fingerprint}`;
    const e = parsePaymentEvent(richEvent({ note, analysis: 'deep' }));
    const messages = buildPrompt(e, local, { userHashKey: 'k'.repeat(32), noteMaxChars: 1000 });
    const text = messages.map((m) => m.content).join('\n');
    for (const raw of [...RAW, '203.0.113.7']) assert.ok(!text.includes(raw), `${raw} in the prompt`);
    const payload = JSON.parse(messages[1]?.content ?? '{}') as Record<string, unknown>;
    for (const k of ['email', 'ipAddress', 'card', 'billingAddress', 'shippingAddress', 'userAgent', 'metadata'])
      assert.ok(!(k in payload), k);
    assert.match(String(payload['note']), /\[email\]|\[personal\]/);
  });

  it('any email address or IPv4 address in a note is scrubbed (property)', () => {
    const email = fc.tuple(
      fc.stringMatching(/^[a-z0-9._+-]{1,12}$/),
      fc.stringMatching(/^[a-z0-9-]{1,10}\.[a-z]{2,5}$/),
    );
    fc.assert(
      fc.property(
        fc.string({ maxLength: 30 }),
        email,
        fc.ipV4(),
        fc.string({ maxLength: 30 }),
        (pre, [l, d], ip, post) => {
          const out = scrubNote(`${pre} ${l}@${d} ${ip} ${post}`, 'nobody', 'u_x', 4000);
          assert.ok(!out.includes(`${l}@${d}`), 'email leaked');
          assert.ok(!out.includes(` ${ip} `), 'IP leaked');
        },
      ),
    );
  });

  it('log lines redact the personal keys whatever a caller passes', () => {
    const lines: string[] = [];
    const logger = createJsonLogger('debug', (line) => lines.push(line));
    logger.info('payment', {
      email: RICH.email,
      ipAddress: RICH.ipAddress,
      userAgent: RICH.userAgent,
      billingAddress: 'FR 75011',
      shippingPostalCode: '10115',
      cardBin: '411111',
      metadata: 'black-friday',
      transactionId: 'tx-1',
    });
    const text = lines.join('\n');
    for (const raw of RAW) assert.ok(!text.includes(raw), `${raw} logged`);
    assert.ok(text.includes('tx-1'), 'other fields stay');
  });
});

describe('rules see the fraud-signal fields', () => {
  const vars = (event: Record<string, unknown>) => ({
    event: parsePaymentEvent(event) as unknown as Record<string, unknown>,
    features: {},
    velocity: {},
    score: 0.5,
    has_score: true,
    profile: { id: 'default', review: 0.5, decline: 0.9, offset: 0 },
  });
  const evaluate = (expr: string, event: Record<string, unknown>): unknown => {
    const e = celEnvironment().parse(expr);
    assert.ok(e.check().valid, expr);
    return e(vars(event));
  };

  it('as event.email, event.ipAddress, event.card.bin, event.billingAddress.country, event.metadata.<key>', () => {
    const rich = richEvent();
    assert.equal(evaluate('event.email.endsWith("@example.com")', rich), true);
    assert.equal(evaluate('event.ipAddress == "2001:db8::1"', rich), true);
    assert.equal(evaluate('has(event.card) && has(event.card.bin) && event.card.bin.startsWith("4")', rich), true);
    assert.equal(evaluate('event.billingAddress.country != event.shippingAddress.country', rich), true);
    assert.equal(evaluate('event.metadata.giftWrap && event.metadata.basketItems > 2.0', rich), true);
    assert.equal(evaluate('event.cardFingerprint == event.card.fingerprint', rich), true);
    assert.equal(evaluate('has(event.card) && has(event.card.bin)', richEvent({ card: undefined })), false);
  });
});
