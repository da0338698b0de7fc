import type { InProcessBus, OutgoingMessage } from './in-process-bus';

/**
 * Publishes `risk-completed` results. The message id is the transaction id, so the topic's duplicate
 * detection drops re-emissions of the same result (redeliveries).
 */
export interface ResultPublisher {
  publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Publishes to a topic of the embedded in-process bus (`npm start`, tests), with the topic's duplicate
 * detection unless `detectDuplicates` is false (tests that count every send, as a broker sees them).
 */
export class InProcessTopicPublisher implements ResultPublisher {
  constructor(
    private readonly bus: InProcessBus,
    private readonly topic: string,
    private readonly detectDuplicates = true,
  ) {}
  publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void> {
    this.bus.send(this.topic, message, this.detectDuplicates);
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
