import { AppError } from '../errors/errors';
import { NO_BUS, type MessageSender, type OutgoingMessage } from './message-bus';

/**
 * Publishes `risk-completed` results. The message id is the transaction id, so the topic's duplicate
 * detection drops re-emissions of the same result (redeliveries).
 */
export interface ResultPublisher {
  publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void>;
  dispose(): Promise<void>;
}

/**
 * Publishes to a topic of a bus held in the process (the local host's embedded bus: `npm start`, tests), with the
 * topic's duplicate detection unless `detectDuplicates` is false (tests that count every send, as a broker sees them).
 */
export class InProcessTopicPublisher implements ResultPublisher {
  constructor(
    private readonly bus: MessageSender,
    private readonly topic: string,
    private readonly detectDuplicates = true,
  ) {}
  publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void> {
    this.bus.sendMany(this.topic, [message], this.detectDuplicates);
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * The publisher when the results topic is nowhere: no Service Bus namespace is configured and the host passed no bus.
 * The engine starts (HTTP scoring needs no topic); each publish fails with `config_invalid` naming what to set.
 */
export class NoTopicPublisher implements ResultPublisher {
  publish(): Promise<void> {
    return Promise.reject(
      new AppError('config_invalid', `No results topic to publish to: ${NO_BUS.message}.`, { errors: [NO_BUS] }),
    );
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
