/**
 * The Service Bus hand-off of the case intake (the real `@azure/service-bus` sender) against the loopback AMQP 1.0
 * peer: cases go to the intake queue in batched transfers (fewer transfers than cases); a case too large for a message
 * is refused alone; a broker refusing the transfer is a transient `dependency_unavailable` (the writer retries).
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { ServiceBusCaseHandOff } from '../../lib/cases/service-bus-handoff';
import type { AppError } from '../../lib/errors/errors';
import { AmqpPeer } from '../support/amqp-peer';
import { newCase } from './support';

const QUEUE = 'case-intake';
const T0 = Date.parse('2026-12-01T08:00:00Z');

describe('ServiceBusCaseHandOff against an AMQP 1.0 peer', () => {
  let peer: AmqpPeer;
  let handOff: ServiceBusCaseHandOff;
  before(async () => {
    peer = await AmqpPeer.start();
    handOff = await ServiceBusCaseHandOff.create({ connectionString: peer.connectionString }, QUEUE);
  });
  after(async () => {
    await handOff.dispose();
    await peer.stop();
  });

  it('sends the cases to the intake queue in batched transfers', async () => {
    const cases = Array.from({ length: 20 }, (_, i) => newCase(`sb-${i}`, T0));
    assert.deepEqual(await handOff.send(cases), { refused: 0 });
    const got = peer.accepted(QUEUE);
    assert.ok(got.length >= 1 && got.length < cases.length, `${got.length} transfer(s) for ${cases.length} cases`);
  });

  it('a case larger than a message may be is refused (counted by the writer); the others are sent', async () => {
    const before = peer.accepted(QUEUE).length;
    const big = newCase('sb-big', T0, {}, { note: 'x'.repeat(300 * 1024) });
    assert.deepEqual(await handOff.send([newCase('sb-a', T0), big, newCase('sb-b', T0)]), { refused: 1 });
    assert.ok(peer.accepted(QUEUE).length > before, 'the others sent');
  });

  it('a broker that refuses the transfer: a transient dependency_unavailable', async () => {
    peer.verdict = () => ({ kind: 'reject', condition: 'amqp:unauthorized-access', description: 'no Send claim' });
    try {
      await assert.rejects(
        handOff.send([newCase('sb-refused', T0)]),
        (e: AppError) => e.code === 'dependency_unavailable' && e.transient,
      );
    } finally {
      peer.verdict = () => ({ kind: 'accept' });
    }
  });
});
