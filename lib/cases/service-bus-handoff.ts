/**
 * The Azure Service Bus intake queue (`CASE_INTAKE_QUEUE`). Its own module so that `@azure/service-bus` loads only
 * when a namespace is configured. Cases are sent in batches (`createMessageBatch`: as many per request as the
 * broker's size limit allows), message id = transaction id (the queue's duplicate detection drops a repeat).
 */
import type { TokenCredential } from '@azure/identity';
import { ServiceBusClient, type ServiceBusSender } from '@azure/service-bus';
import { PUBLISH_RETRY, toServiceBusMessage, type ServiceBusTarget } from '../async/service-bus-publisher';
import { AppError } from '../errors/errors';
import { caseMessage, type CaseHandOff } from './case-handoff';
import type { NewCase } from './case-store';

/** Bytes per batch: the Standard tier's message size limit (a Premium namespace allows more; this fits both). */
const BATCH_BYTES = 256 * 1024;

/** Hands cases to a Service Bus queue. */
export class ServiceBusCaseHandOff implements CaseHandOff {
  private constructor(
    private readonly client: ServiceBusClient,
    private readonly sender: ServiceBusSender,
  ) {}

  /** @param target the namespace and credential (production), or a connection string (tests). */
  static create(target: ServiceBusTarget, queue: string): Promise<ServiceBusCaseHandOff> {
    const client =
      'connectionString' in target
        ? new ServiceBusClient(target.connectionString, { retryOptions: PUBLISH_RETRY })
        : new ServiceBusClient(target.fullyQualifiedNamespace, target.credential, { retryOptions: PUBLISH_RETRY });
    return Promise.resolve(new ServiceBusCaseHandOff(client, client.createSender(queue)));
  }

  /** Sends the cases in as few requests as fit; a case larger than a message may be is refused (counted). */
  async send(cases: readonly NewCase[]): Promise<{ readonly refused: number }> {
    let refused = 0;
    try {
      let batch = await this.sender.createMessageBatch({ maxSizeInBytes: BATCH_BYTES });
      for (const c of cases) {
        const m = toServiceBusMessage(caseMessage(c));
        if (batch.tryAddMessage(m)) continue;
        if (batch.count > 0) {
          await this.sender.sendMessages(batch);
          batch = await this.sender.createMessageBatch({ maxSizeInBytes: BATCH_BYTES });
          if (batch.tryAddMessage(m)) continue;
        }
        refused++;
      }
      if (batch.count > 0) await this.sender.sendMessages(batch);
      return { refused };
    } catch (err) {
      throw new AppError('dependency_unavailable', 'Handing cases to the Service Bus intake queue failed.', {
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

/** The hand-off on `namespace` with `credential` (the composition root's managed identity). */
export function serviceBusCaseHandOff(
  namespace: string,
  credential: TokenCredential,
  queue: string,
): Promise<ServiceBusCaseHandOff> {
  return ServiceBusCaseHandOff.create({ fullyQualifiedNamespace: namespace, credential }, queue);
}
