import assert from 'node:assert/strict';
import { after, before, beforeEach, describe, it } from 'node:test';
import { RetryMode } from '@azure/service-bus';
import { ServiceBusTopicPublisher } from '../../lib/async/service-bus-publisher';
import type { AppError } from '../../lib/errors/errors';
import { AmqpPeer } from '../support/amqp-peer';

const TOPIC = 'risk-completed';
const body = {
  transactionId: 'tx-amqp-1',
  score: 0.42,
  decision: 'review',
  reasons: [{ feature: 'amount_zscore', contribution: 0.3 }],
  model: { name: 'fraud', version: '1.2.3' },
  correlationId: 'order-77',
  scoredAt: '2026-12-01T10:00:00.000Z',
};

describe('ServiceBusTopicPublisher (the real @azure/service-bus sender) against an AMQP 1.0 peer', () => {
  let peer: AmqpPeer;
  let publisher: ServiceBusTopicPublisher;
  before(async () => {
    peer = await AmqpPeer.start();
    // As the service builds it, with a connection string instead of a managed identity, and fast retries.
    publisher = await ServiceBusTopicPublisher.create({ connectionString: peer.connectionString }, TOPIC, {
      maxRetries: 1,
      retryDelayInMs: 10,
      timeoutInMs: 5000,
      mode: RetryMode.Fixed,
    });
  });
  after(async () => {
    await publisher.dispose();
    await peer.stop();
  });
  beforeEach(() => (peer.verdict = () => ({ kind: 'accept' })));

  it('sends message id = transactionId, the JSON body, the correlation id and application properties', async () => {
    await publisher.publish({
      messageId: body.transactionId,
      correlationId: body.correlationId,
      body,
      applicationProperties: { decision: 'review', modelVersion: '1.2.3' },
    });
    const [t, ...rest] = peer.accepted(TOPIC);
    assert.equal(rest.length, 0, 'one transfer');
    assert.equal(t?.messageId, 'tx-amqp-1');
    assert.equal(t?.correlationId, 'order-77');
    assert.equal(t?.contentType, 'application/json');
    assert.deepEqual(t?.body, body);
    assert.deepEqual(t?.applicationProperties, { decision: 'review', modelVersion: '1.2.3' });
    assert.ok(
      peer.tokens.some((k) => k.audience === `sb://127.0.0.1:${peer.port}/${TOPIC}`),
      'authorized through CBS for the topic',
    );
  });

  it('a transfer the broker rejects throws a transient dependency_unavailable error', async () => {
    peer.verdict = () => ({ kind: 'reject', condition: 'amqp:unauthorized-access', description: 'no Send claim' });
    const before = peer.transfers.length;
    await assert.rejects(
      publisher.publish({ messageId: 'tx-rejected', body: { transactionId: 'tx-rejected' } }),
      (e: AppError) => e.code === 'dependency_unavailable' && e.transient,
    );
    const sent = peer.transfers.slice(before);
    assert.ok(sent.length >= 1 && sent.every((t) => t.outcome === 'rejected' && t.messageId === 'tx-rejected'));
  });

  it('a link detached with an error on every try throws, after the configured retry', async () => {
    // The SDK keeps a delivery pending across a detach (it re-attaches itself), so each try ends at its
    // timeout: a separate publisher with a short one keeps this test quick.
    const short = await ServiceBusTopicPublisher.create({ connectionString: peer.connectionString }, TOPIC, {
      maxRetries: 1,
      retryDelayInMs: 10,
      timeoutInMs: 1000,
      mode: RetryMode.Fixed,
    });
    peer.verdict = () => ({ kind: 'detach', condition: 'amqp:internal-error', description: 'entity is being updated' });
    const before = peer.transfers.length;
    await assert.rejects(
      short.publish({ messageId: 'tx-detached', body: { transactionId: 'tx-detached' } }),
      (e: AppError) => e.code === 'dependency_unavailable' && e.transient,
    );
    await short.dispose();
    assert.equal(peer.accepted(TOPIC).filter((t) => t.messageId === 'tx-detached').length, 0);
    assert.equal(peer.transfers.slice(before).length, 2, 'first try plus maxRetries: 1');
  });

  it('recovers on the next publish once the broker accepts again', async () => {
    await publisher.publish({ messageId: 'tx-after', body: { transactionId: 'tx-after' } });
    assert.equal(peer.accepted(TOPIC).filter((t) => t.messageId === 'tx-after').length, 1);
  });
});
