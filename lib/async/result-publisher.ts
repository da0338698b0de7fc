import type { TokenCredential } from '@azure/identity';
import { ServiceBusClient, type ServiceBusSender } from '@azure/service-bus';
import { AppError } from '../errors/errors';
import type { InProcessBus, OutgoingMessage } from './in-process-bus';

/**
 * Publishes `risk-completed` results. The message id is the transaction id, so the topic's duplicate
 * detection drops re-emissions of the same result (redeliveries).
 */
export interface ResultPublisher {
  publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void>;
  dispose(): Promise<void>;
}

/** Publishes to a topic of the embedded in-process bus (`npm start`, tests); duplicate detection included. */
export class InProcessTopicPublisher implements ResultPublisher {
  constructor(
    private readonly bus: InProcessBus,
    private readonly topic: string,
  ) {}
  publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void> {
    this.bus.send(this.topic, message, true);
    return Promise.resolve();
  }
  dispose(): Promise<void> {
    return Promise.resolve();
  }
}

/**
 * Publishes to an Azure Service Bus topic with the SDK and a managed identity. Used instead of an output
 * binding because the Node.js output binding cannot set `messageId` (only the body), and duplicate
 * detection needs it.
 */
export class ServiceBusTopicPublisher implements ResultPublisher {
  private constructor(
    private readonly client: ServiceBusClient,
    private readonly sender: ServiceBusSender,
  ) {}

  /**
   * @param fullyQualifiedNamespace e.g. `mybus.servicebus.windows.net` (`ServiceBusConnection__fullyQualifiedNamespace`).
   * @param topic the results topic (`RESULTS_TOPIC`).
   */
  static async create(
    fullyQualifiedNamespace: string,
    topic: string,
    credential: TokenCredential,
  ): Promise<ServiceBusTopicPublisher> {
    const client = new ServiceBusClient(fullyQualifiedNamespace, credential);
    return new ServiceBusTopicPublisher(client, client.createSender(topic));
  }

  async publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void> {
    try {
      await this.sender.sendMessages({
        messageId: message.messageId,
        ...(message.correlationId === undefined ? {} : { correlationId: message.correlationId }),
        body: message.body,
        contentType: 'application/json',
        ...(message.applicationProperties === undefined
          ? {}
          : { applicationProperties: { ...message.applicationProperties } }),
      });
    } catch (err) {
      throw new AppError('dependency_unavailable', 'Publishing the result to Service Bus failed.', {
        cause: err,
        transient: true,
      });
    }
  }

  async dispose(): Promise<void> {
    await this.sender.close();
    await this.client.close();
  }
}
