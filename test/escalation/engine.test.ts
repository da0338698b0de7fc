import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import { InProcessBus } from '../../local/in-process-bus';
import type { AsyncScoreResult } from '../../lib/async/result-store';
import { testConfig } from '../support/config';
import type { Engine } from '../../lib/engine';
import { AppError } from '../../lib/errors/errors';
import type { ScoreResult } from '../../lib/scoring/scorer';
import { silentLogger } from '../../lib/platform/logger';
import { Telemetry } from '../../lib/telemetry/telemetry';
import { BasicTracerProvider, InMemorySpanExporter, SimpleSpanProcessor } from '@opentelemetry/sdk-trace-base';
import { FakeOpenAI } from '../support/openai-peer';
import { validEvent } from '../support/events';

describe('escalation wired through the engine (HTTP, batch and Service Bus paths)', () => {
  let fake: FakeOpenAI;
  let engine: Engine;
  before(async () => {
    fake = await FakeOpenAI.create();
    const config = testConfig({
      INFERENCE_MODE: 'inline',
      REQUEST_DEADLINE_MS: '2000',
      AZURE_OPENAI_ENDPOINT: fake.endpoint,
      AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini',
      AZURE_OPENAI_API_KEY: 'test-api-key',
      ESCALATION_MAX_SHARE: '1',
    });
    engine = await createEngine(config, { logger: silentLogger, bus: new InProcessBus() });
    await engine.start();
  });
  after(async () => {
    await engine.dispose();
    await fake.close();
  });
  beforeEach(() => {
    fake.set({ mode: 'ok' });
    fake.count = 0;
  });

  it('"analysis": "deep" escalates on the HTTP path: source openai, combined decision, escalation block', async () => {
    const r = await engine.score(validEvent({ transactionId: 'tx-deep', userId: 'user-tx-deep', analysis: 'deep' }));
    assert.equal(r.source, 'openai');
    assert.equal(r.decision, 'decline');
    assert.equal(r.escalation?.outcome, 'ok');
    assert.deepEqual(r.escalation?.triggers.includes('requested'), true);
    assert.equal(fake.count, 1);
  });

  it('a payment without a trigger stays local and sends nothing', async () => {
    const r = await engine.score(validEvent({ transactionId: 'tx-plain', userId: 'user-tx-plain' }));
    assert.equal(r.source, 'local');
    assert.equal(r.escalation, undefined);
    assert.equal(fake.count, 0);
  });

  it('rejects an unknown analysis value, naming the field', async () => {
    await assert.rejects(engine.score(validEvent({ analysis: 'shallow' })), (e: AppError) => {
      assert.deepEqual(
        e.errors?.map((x) => x.path),
        ['analysis'],
      );
      return e.code === 'validation_failed';
    });
  });

  // each payment has its own user: the velocity features would otherwise move the local score into the review band
  it('batch: only the events that ask are escalated', async () => {
    const { results } = await engine.scoreBatch({
      events: [
        validEvent({ transactionId: 'b-1', userId: 'user-b-1' }),
        validEvent({ transactionId: 'b-2', userId: 'user-b-2', analysis: 'deep' }),
        validEvent({ transactionId: 'b-3', userId: 'user-b-3' }),
      ],
    });
    const [a, b, c] = results as ScoreResult[];
    assert.equal(a?.source, 'local');
    assert.equal(b?.source, 'openai');
    assert.equal(c?.source, 'local');
    assert.equal(fake.count, 1);
  });

  it('Service Bus: the stored result holds the escalation outcome; a redelivery never calls the LLM again', async () => {
    const body = Buffer.from(
      JSON.stringify(validEvent({ transactionId: 'tx-sb-1', userId: 'user-tx-sb-1', analysis: 'deep' })),
    );
    const first = await engine.processMessage(body, { messageId: 'tx-sb-1', deliveryCount: 1 });
    assert.ok(first.kind === 'scored' && !first.replayed);
    const stored: AsyncScoreResult = first.result;
    assert.equal(stored.source, 'openai');
    assert.equal(stored.escalation?.outcome, 'ok');
    assert.equal(fake.count, 1);
    fake.set({ mode: 'server-error' });
    const again = await engine.processMessage(body, { messageId: 'tx-sb-1', deliveryCount: 2 });
    // the first delivery's publish was confirmed and marked: the redelivery sends nothing and scores nothing
    assert.equal(again.kind, 'duplicate');
    assert.equal(fake.count, 1, 'the redelivery never called the LLM');
  });

  it('Service Bus: a fallback is stored too, and a redelivery never escalates again', async () => {
    fake.set({ mode: 'server-error' });
    const body = Buffer.from(
      JSON.stringify(validEvent({ transactionId: 'tx-sb-2', userId: 'user-tx-sb-2', analysis: 'deep' })),
    );
    const first = await engine.processMessage(body, { messageId: 'tx-sb-2' });
    assert.ok(first.kind === 'scored');
    assert.equal(first.result.source, 'local-fallback');
    assert.equal(first.result.escalation?.outcome, 'server_error');
    fake.set({ mode: 'ok' });
    const again = await engine.processMessage(body, { messageId: 'tx-sb-2' });
    assert.equal(again.kind, 'duplicate', 'the stored fallback stands: nothing is scored or sent again');
    assert.equal(fake.count, 1);
  });
});

describe('escalation span', () => {
  it('an escalated payment runs in an `escalation` span with the outcome, breaker state and tokens, no payment data', async () => {
    const fake = await FakeOpenAI.create();
    const exporter = new InMemorySpanExporter();
    const telemetry = await Telemetry.create({
      tracerProvider: new BasicTracerProvider({ spanProcessors: [new SimpleSpanProcessor(exporter)] }),
    });
    const config = testConfig({
      INFERENCE_MODE: 'inline',
      REQUEST_DEADLINE_MS: '2000',
      AZURE_OPENAI_ENDPOINT: fake.endpoint,
      AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini',
      AZURE_OPENAI_API_KEY: 'test-api-key',
      ESCALATION_MAX_SHARE: '1',
    });
    const engine = await createEngine(config, { logger: silentLogger, bus: new InProcessBus(), telemetry });
    try {
      await engine.start();
      await engine.score(validEvent({ transactionId: 'tx-span', userId: 'user-span-raw-id', analysis: 'deep' }));
      await engine.score(validEvent({ transactionId: 'tx-plain', userId: 'user-plain' }));
      const spans = exporter.getFinishedSpans().filter((s) => s.name === 'escalation');
      assert.equal(spans.length, 1, 'one escalation span: the payment that did not escalate has none');
      const a = (spans[0] as (typeof spans)[number]).attributes;
      assert.equal(a['llm.outcome'], 'ok');
      assert.equal(a['breaker.state'], 'closed');
      assert.equal(a['gen_ai.request.model'], 'gpt-4o-mini');
      assert.ok(Number(a['gen_ai.usage.input_tokens']) > 0);
      assert.ok(!JSON.stringify(a).includes('user-span-raw-id'));
    } finally {
      await engine.dispose();
      await fake.close();
    }
  });
});
