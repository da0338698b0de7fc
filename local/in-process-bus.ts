import { randomUUID } from 'node:crypto';
import type { MessageSender, OutgoingMessage } from '../lib/async/message-bus';
import type { BusJournal, JournalMessage } from './bus-journal';

/** A message on an in-process queue or topic, as the local endpoints show it. */
export interface BusMessage {
  readonly messageId: string;
  readonly correlationId?: string;
  readonly body: unknown;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
  readonly enqueuedTimeUtc: string;
  deliveryCount: number;
  deadLetterReason?: string;
  deadLetterErrorDescription?: string;
}

/** Options of {@link InProcessBus}. */
export interface InProcessBusOptions {
  /** Most messages kept per entity (queue, dead-letter queue or topic); older ones are dropped first. Default 100,000. */
  readonly maxMessagesPerEntity?: number;
  /** Duplicate-detection window of topics, ms. Default 10 min (Service Bus' default). */
  readonly duplicateWindowMs?: number;
  /** Wall clock, ms since the epoch. Default `Date.now`. */
  readonly now?: () => number;
  /**
   * Keeps its durable queues on disk (`npm start`: the case intake), so a stop of the process loses nothing sent
   * to them; a send to a full durable queue throws instead of dropping the oldest. Default none (all in memory).
   */
  readonly journal?: BusJournal;
}

class Entity {
  /** Waiting messages from index `head` on (received ones before it are cleared, then compacted). */
  ready: (BusMessage | undefined)[] = [];
  head = 0;
  readonly locked = new Map<string, BusMessage>();
  readonly deadLetter: BusMessage[] = [];
  readonly seen = new Map<string, number>(); // messageId → first seen, for duplicate detection
  readonly waiters = new Set<() => void>();
  constructor(readonly durable: boolean) {}
}

/** A send to a full durable queue (nothing of the batch was sent). */
export class BusQueueFullError extends Error {
  override readonly name = 'BusQueueFullError';
}

/**
 * The embedded message bus of `npm start`: queues with peek-lock, delivery counts, redelivery and
 * dead-lettering, and topics with duplicate detection by message id, as Azure Service Bus does them.
 * Bounded: each entity keeps at most `maxMessagesPerEntity` messages.
 */
export class InProcessBus implements MessageSender {
  private readonly entities = new Map<string, Entity>();
  private readonly max: number;
  private readonly windowMs: number;
  private readonly now: () => number;
  private readonly journal: BusJournal | undefined;

  constructor(options: InProcessBusOptions = {}) {
    this.max = options.maxMessagesPerEntity ?? 100_000;
    this.windowMs = options.duplicateWindowMs ?? 10 * 60_000;
    this.now = options.now ?? Date.now;
    this.journal = options.journal;
  }

  private entity(name: string): Entity {
    let e = this.entities.get(name);
    if (e === undefined) {
      const durable = this.journal?.isDurable(name) ?? false;
      this.entities.set(name, (e = new Entity(durable)));
      if (durable)
        for (const m of (this.journal as BusJournal).replay(name)) {
          e.ready.push({ ...m, deliveryCount: 0 });
          e.seen.set(m.messageId, this.now());
        }
    }
    return e;
  }

  private push(list: BusMessage[], m: BusMessage): void {
    list.push(m);
    if (list.length > this.max) list.splice(0, list.length - this.max);
  }

  private pushReady(e: Entity, m: BusMessage): void {
    e.ready.push(m);
    const waiting = e.ready.length - e.head;
    if (waiting > this.max) e.head += waiting - this.max; // the oldest are dropped
  }

  /**
   * Sends a message to a queue or topic. With `detectDuplicates` (topics), a message id seen within the
   * window is dropped, as Service Bus duplicate detection does.
   * @returns false when the message was dropped as a duplicate.
   * @throws BusQueueFullError when a durable queue is full.
   */
  send(name: string, msg: OutgoingMessage, detectDuplicates = false): boolean {
    return this.sendMany(name, [msg], detectDuplicates) === 1;
  }

  /**
   * Sends messages to a queue or topic in one step (a durable queue appends them to its journal in one write, before
   * they can be received).
   * @returns how many were sent (the others were duplicates).
   * @throws BusQueueFullError when a durable queue has no room for all of them (none is sent).
   */
  sendMany(name: string, msgs: readonly OutgoingMessage[], detectDuplicates = false): number {
    const e = this.entity(name);
    if (e.durable && e.ready.length - e.head + e.locked.size + msgs.length > this.max)
      throw new BusQueueFullError(`queue ${name} is full (${this.max} messages)`);
    const now = this.now();
    const sent: BusMessage[] = [];
    for (const msg of msgs) {
      const messageId = msg.messageId ?? randomUUID();
      if (detectDuplicates && !this.firstSeen(e, messageId, now)) continue;
      sent.push({
        messageId,
        ...(msg.correlationId === undefined ? {} : { correlationId: msg.correlationId }),
        body: msg.body,
        applicationProperties: msg.applicationProperties ?? {},
        enqueuedTimeUtc: new Date(now).toISOString(),
        deliveryCount: 0,
      });
    }
    if (e.durable) (this.journal as BusJournal).appendSends(name, sent.map(journalMessage));
    for (const m of sent) this.pushReady(e, m);
    if (sent.length > 0) this.wake(e);
    return sent.length;
  }

  /** Duplicate detection: records `messageId`; false when it was seen within the window. */
  private firstSeen(e: Entity, messageId: string, now: number): boolean {
    // ids are kept in the order they were first seen, so the expired ones are at the front
    for (const [id, t] of e.seen) {
      if (now - t <= this.windowMs) break;
      e.seen.delete(id);
    }
    if (e.seen.has(messageId)) return false;
    e.seen.set(messageId, now);
    if (e.seen.size > this.max) e.seen.delete(e.seen.keys().next().value as string);
    return true;
  }

  /** Peek-lock: takes the next message, increments its delivery count, and holds it until settled. */
  receive(name: string): BusMessage | undefined {
    const e = this.entity(name);
    if (e.head >= e.ready.length) return undefined;
    const m = e.ready[e.head] as BusMessage;
    e.ready[e.head++] = undefined;
    if (e.head === e.ready.length) {
      e.ready = [];
      e.head = 0;
    } else if (e.head >= 1024 && e.head * 2 >= e.ready.length) {
      e.ready = e.ready.slice(e.head); // O(1) amortized per receive, never a shift per message
      e.head = 0;
    }
    m.deliveryCount++;
    e.locked.set(m.messageId + '#' + m.deliveryCount, m);
    return m;
  }

  /** Resolves when the queue may have a message to receive, or after `timeoutMs`. */
  waitForMessage(name: string, timeoutMs: number): Promise<void> {
    const e = this.entity(name);
    if (e.ready.length > e.head) return Promise.resolve();
    return new Promise((resolve) => {
      const done = (): void => {
        clearTimeout(timer);
        e.waiters.delete(done);
        resolve();
      };
      const timer = setTimeout(done, timeoutMs);
      e.waiters.add(done);
    });
  }

  private unlock(name: string, m: BusMessage): void {
    this.entity(name).locked.delete(m.messageId + '#' + m.deliveryCount);
  }

  /** Completes a received message: it is gone. */
  complete(name: string, m: BusMessage): void {
    this.unlock(name, m);
    this.settled(name, m);
  }

  /** A durable queue's message left for good: acked in the journal, which is compacted when it has grown. */
  private settled(name: string, m: BusMessage): void {
    const e = this.entity(name);
    if (!e.durable) return;
    const journal = this.journal as BusJournal;
    journal.appendAck(name, m.messageId);
    if (journal.needsCompaction(name))
      journal.rewrite(name, [...e.locked.values(), ...this.messages(name)].map(journalMessage));
  }

  /** Abandons a received message: it goes back to the queue, or to the dead-letter queue after `maxDeliveryCount` deliveries. */
  abandon(name: string, m: BusMessage, maxDeliveryCount: number, error?: string): void {
    this.unlock(name, m);
    if (m.deliveryCount >= maxDeliveryCount) {
      this.deadLetterMessage(name, m, 'MaxDeliveryCountExceeded', error);
      return;
    }
    const e = this.entity(name);
    this.pushReady(e, m);
    this.wake(e);
  }

  private wake(e: Entity): void {
    const waiters = [...e.waiters];
    e.waiters.clear();
    for (const w of waiters) w();
  }

  /** Moves a received message to the dead-letter queue. */
  deadLetterMessage(name: string, m: BusMessage, reason: string, description?: string): void {
    this.unlock(name, m);
    this.settled(name, m); // the dead-letter queue itself stays in memory
    m.deadLetterReason = reason;
    if (description !== undefined) m.deadLetterErrorDescription = description;
    this.push(this.entity(name).deadLetter, m);
  }

  /** Messages waiting on a queue, or all messages of a topic / output queue. */
  messages(name: string): readonly BusMessage[] {
    const e = this.entity(name);
    return (e.head === 0 ? e.ready : e.ready.slice(e.head)) as readonly BusMessage[];
  }

  /** The dead-letter queue of a queue. */
  deadLettered(name: string): readonly BusMessage[] {
    return this.entity(name).deadLetter;
  }

  /** Messages received and not yet settled. */
  inFlight(name: string): number {
    return this.entity(name).locked.size;
  }
}

function journalMessage(m: BusMessage): JournalMessage {
  return {
    messageId: m.messageId,
    ...(m.correlationId === undefined ? {} : { correlationId: m.correlationId }),
    body: m.body,
    applicationProperties: m.applicationProperties,
    enqueuedTimeUtc: m.enqueuedTimeUtc,
  };
}
