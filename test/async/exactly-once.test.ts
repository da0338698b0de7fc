/**
 * Exactly once across processes: two scorer processes (real engine, real Redis store and lock, real
 * `@azure/service-bus` sender) share one Redis; the test plays Service Bus, delivering and redelivering
 * messages and killing a process at each failure point. What was published is counted at the AMQP peer:
 * every transfer the broker accepted (`accepted`), and what subscribers would get after Service Bus
 * duplicate detection (`delivered`).
 */
import assert from 'node:assert/strict';
import { randomUUID } from 'node:crypto';
import { after, before, beforeEach, describe, it } from 'node:test';
import { testConfig } from '../support/config';
import { AmqpPeer } from '../support/amqp-peer';
import { validEvent } from '../support/events';
import { testRedis } from '../support/redis';
import type { CrashPoint, DeliveryReply } from './support/scorer-process';
import { startScorer, type ScorerProcess } from './support/scorer-processes';

const TOPIC = 'risk-completed';
const MAX_DELIVERY = 10;
const defaults = testConfig({});
const TTL_MS = defaults.idempotency.ttlSec * 1000;
const WINDOW_MS = defaults.serviceBus.duplicateWindowSec * 1000;

describe('exactly one risk-completed per transaction, across two processes sharing one Redis', () => {
  const r = testRedis();
  let peerNow = 1_000_000;
  let peer: AmqpPeer;
  let env: Record<string, string>;
  const procs: ScorerProcess[] = [];
  let a: ScorerProcess;
  let b: ScorerProcess;

  /** A running process in slot `which`, restarted if a test killed it. */
  const scorer = async (which: 0 | 1): Promise<ScorerProcess> => {
    const p = procs[which];
    if (p?.alive === true) return p;
    return (procs[which] = await startScorer(env));
  };

  before(async () => {
    peer = await AmqpPeer.start({ duplicateWindowMs: WINDOW_MS, now: () => peerNow });
    env = {
      REDIS_URL: 'redis://127.0.0.1:6379',
      REDIS_KEY_PREFIX: r.prefix,
      RESULTS_TOPIC: TOPIC,
      IDEMPOTENCY_LOCK_TTL_MS: '1000', // a killed holder's lock lapses after 1 s
      AMQP_PEER_CONNECTION_STRING: peer.connectionString,
      LOG_LEVEL: 'error',
    };
    [a, b] = await Promise.all([scorer(0), scorer(1)]);
  });
  after(async () => {
    await Promise.all(procs.map((p) => p.stop()));
    await peer.stop();
    await r.cleanup();
  });
  beforeEach(async () => {
    a = await scorer(0);
    b = await scorer(1);
    peer.duplicateWindowMs = WINDOW_MS;
  });

  const message = (tx: string): string => JSON.stringify(validEvent({ transactionId: tx }));
  const sent = (tx: string) => peer.accepted(TOPIC).filter((t) => t.messageId === tx);
  const delivered = (tx: string) => peer.delivered(TOPIC).filter((t) => t.messageId === tx);
  const stored = async (tx: string): Promise<unknown> =>
    JSON.parse((await r.redis.get(`${r.prefix}result:v1:${tx}`)) ?? 'null') as unknown;
  const marked = async (tx: string): Promise<boolean> => (await r.redis.exists(`${r.prefix}published:v1:${tx}`)) === 1;

  type Scored = Extract<DeliveryReply, { outcome: unknown }>;

  /** Delivery 1 on `first`, killed at `crashAt`. */
  async function crashOn(first: ScorerProcess, tx: string, crashAt: CrashPoint): Promise<void> {
    const reply = await first.deliver({ body: message(tx), meta: { messageId: tx, deliveryCount: 1 }, crashAt });
    assert.equal(reply, 'crashed', `the process should have died at ${crashAt}`);
  }

  /** Redeliveries on `p` (from `deliveryCount`), as Service Bus does after a lock expires, until one succeeds. */
  async function redeliver(p: ScorerProcess, tx: string, deliveryCount = 2): Promise<Scored> {
    const errors: string[] = [];
    for (let n = deliveryCount; n <= MAX_DELIVERY; n++) {
      const reply = await p.deliver({ body: message(tx), meta: { messageId: tx, deliveryCount: n } });
      assert.notEqual(reply, 'crashed');
      if (reply !== 'crashed' && 'outcome' in reply) return reply;
      errors.push(reply === 'crashed' ? 'crashed' : reply.error);
    }
    return assert.fail(`no delivery succeeded (it would be dead-lettered): ${errors.join(', ')}`);
  }

  it('crash before the result is stored: the redelivery scores it, one publish', async () => {
    const tx = `crash-score-${randomUUID()}`;
    await crashOn(a, tx, 'scoring');
    assert.equal(await stored(tx), null);
    assert.equal(sent(tx).length, 0);
    const reply = await redeliver(b, tx);
    assert.deepEqual(reply.outcome.kind, 'scored');
    assert.equal(reply.runs, 1);
    assert.equal(sent(tx).length, 1, 'one transfer accepted by the broker');
    assert.deepEqual(sent(tx)[0]?.body, await stored(tx));
    assert.equal(await marked(tx), true);
  });

  it('crash after the result is stored, before it is published: the redelivery publishes the stored result', async () => {
    const tx = `crash-stored-${randomUUID()}`;
    await crashOn(a, tx, 'before-publish');
    const kept = await stored(tx);
    assert.notEqual(kept, null);
    assert.equal(sent(tx).length, 0);
    const reply = await redeliver(b, tx);
    assert.deepEqual(reply.outcome, { kind: 'scored', result: kept, replayed: true });
    assert.equal(reply.runs, 0, 'not scored again');
    assert.equal(sent(tx).length, 1);
    assert.deepEqual(sent(tx)[0]?.body, kept);
  });

  it('crash after publishing, before the mark: the late redelivery re-sends the same message, which the topic drops', async () => {
    const tx = `crash-published-${randomUUID()}`;
    await crashOn(a, tx, 'after-publish');
    assert.equal(sent(tx).length, 1);
    assert.equal(await marked(tx), false);
    peerNow += TTL_MS - 60_000; // the redelivery comes as late as the store still remembers the result
    const reply = await redeliver(b, tx);
    assert.equal(reply.runs, 0);
    const [first, second, ...more] = sent(tx);
    assert.equal(more.length, 0);
    assert.deepEqual(second?.body, first?.body, 'the same body');
    assert.equal(second?.messageId, first?.messageId, 'the same message id');
    assert.equal(delivered(tx).length, 1, 'within the duplicate-detection window: subscribers get one');
    assert.equal(await marked(tx), true);
    const again = await redeliver(await scorer(0), tx, 3); // the killed process, restarted
    assert.deepEqual(again.outcome, { kind: 'duplicate', transactionId: tx });
    assert.equal(sent(tx).length, 2, 'the mark stops any further send');
  });

  it('redelivery after the duplicate-detection window: nothing is published again', async () => {
    const tx = `late-${randomUUID()}`;
    peer.duplicateWindowMs = 10 * 60_000; // the old 10-minute window
    const first = await redeliver(a, tx, 1);
    assert.equal(first.outcome.kind, 'scored');
    peerNow += 11 * 60_000;
    const reply = await redeliver(b, tx);
    assert.deepEqual(reply.outcome, { kind: 'duplicate', transactionId: tx });
    assert.equal(sent(tx).length, 1, 'one transfer: the broker never sees the redelivery');
    assert.equal(delivered(tx).length, 1);
  });

  it('the same transaction delivered to both processes at once: scored once, sent once', async () => {
    const tx = `race-${randomUUID()}`;
    const replies = await Promise.all([redeliver(a, tx, 1), redeliver(b, tx, 1)]);
    assert.deepEqual(replies.map((x) => x.outcome.kind).sort(), ['duplicate', 'scored']);
    assert.equal(replies[0].runs + replies[1].runs, 1);
    assert.equal(sent(tx).length, 1);
  });

  it('a corrupt stored result is treated as absent (scored, published once), never a retry loop', async () => {
    const tx = `corrupt-${randomUUID()}`;
    await r.redis.set(`${r.prefix}result:v1:${tx}`, '{"transactionId":', 'EX', 3600);
    const reply = await b.deliver({ body: message(tx), meta: { messageId: tx, deliveryCount: 1 } });
    assert.ok(reply !== 'crashed' && 'outcome' in reply, `first delivery succeeds: ${JSON.stringify(reply)}`);
    assert.equal(reply.outcome.kind, 'scored');
    assert.equal(sent(tx).length, 1);
    assert.deepEqual(sent(tx)[0]?.body, await stored(tx));
  });

  it('a corrupt stored result whose publish was confirmed: nothing is sent', async () => {
    const tx = `corrupt-published-${randomUUID()}`;
    await r.redis.set(`${r.prefix}result:v1:${tx}`, 'garbage', 'EX', 3600);
    await r.redis.set(`${r.prefix}published:v1:${tx}`, '1', 'EX', 3600);
    const reply = await redeliver(a, tx, 1);
    assert.deepEqual(reply.outcome, { kind: 'duplicate', transactionId: tx });
    assert.equal(sent(tx).length, 0);
  });
});
