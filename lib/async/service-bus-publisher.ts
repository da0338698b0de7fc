/**
 * The Azure Service Bus results publisher. Its own module so that `@azure/service-bus` loads only when a
 * namespace is configured (the composition root imports it then), not on every start.
 */
import type { TokenCredential } from '@azure/identity';
import {
  RetryMode,
  ServiceBusClient,
  type RetryOptions,
  type ServiceBusMessage,
  type ServiceBusSender,
} from '@azure/service-bus';
import { AppError } from '../errors/errors';
import type { OutgoingMessage } from './message-bus';
import type { ResultPublisher } from './result-publisher';

/** Where {@link ServiceBusTopicPublisher} connects: a namespace with a credential (production), or a connection string. */
export type ServiceBusTarget =
  | { readonly fullyQualifiedNamespace: string; readonly credential: TokenCredential }
  | { readonly connectionString: string };

/**
 * Retries of one publish: 2 retries, exponential from 500 ms (at most 4 s), 10 s per try: a failing publish
 * throws within about 35 s, inside the message's lock (renewed by the host for 1 min).
 */
export const PUBLISH_RETRY: RetryOptions = Object.freeze({
  maxRetries: 2,
  retryDelayInMs: 500,
  maxRetryDelayInMs: 4000,
  timeoutInMs: 10_000,
  mode: RetryMode.Exponential,
});

/**
 * Publishes to an Azure Service Bus topic with the SDK (a managed identity in production). Used instead of
 * an output binding because the Node.js output binding cannot set `messageId` (only the body), and
 * duplicate detection needs it. The promise resolves only once the broker accepted the message.
 */
export class ServiceBusTopicPublisher implements ResultPublisher {
  private constructor(
    private readonly client: ServiceBusClient,
    private readonly sender: ServiceBusSender,
  ) {}

  /**
   * @param target `{ fullyQualifiedNamespace, credential }`, e.g. `mybus.servicebus.windows.net`
   *   (`ServiceBusConnection__fullyQualifiedNamespace`), or `{ connectionString }` (emulators, tests).
   * @param topic the results topic (`RESULTS_TOPIC`).
   * @param retryOptions the client's retries; default {@link PUBLISH_RETRY}.
   */
  static create(
    target: ServiceBusTarget,
    topic: string,
    retryOptions: RetryOptions = PUBLISH_RETRY,
  ): Promise<ServiceBusTopicPublisher> {
    const client =
      'connectionString' in target
        ? new ServiceBusClient(target.connectionString, { retryOptions })
        : new ServiceBusClient(target.fullyQualifiedNamespace, target.credential, { retryOptions });
    return Promise.resolve(new ServiceBusTopicPublisher(client, client.createSender(topic)));
  }

  async publish(message: OutgoingMessage & { readonly messageId: string }): Promise<void> {
    try {
      await this.sender.sendMessages(toServiceBusMessage(message));
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

/** The Service Bus message for a result: message id, correlation id, JSON body, application properties. */
export function toServiceBusMessage(message: OutgoingMessage & { readonly messageId: string }): ServiceBusMessage {
  return {
    messageId: message.messageId,
    ...(message.correlationId === undefined ? {} : { correlationId: message.correlationId }),
    body: message.body,
    contentType: 'application/json',
    ...(message.applicationProperties === undefined
      ? {}
      : { applicationProperties: { ...message.applicationProperties } }),
  };
}
