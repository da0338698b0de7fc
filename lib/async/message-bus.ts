/**
 * What lib sends to a message bus held in the process: the local host's embedded Service Bus (`npm start`,
 * local/in-process-bus.ts), which the host passes to the engine (`EngineDeps.bus`). lib never creates one; with a
 * Service Bus namespace configured, lib reaches Service Bus through the SDK instead (lib/async/service-bus-publisher.ts,
 * lib/cases/service-bus-handoff.ts).
 * @module
 */
import type { FieldError } from '../errors/errors';

/** A message to send to a queue or topic. */
export interface OutgoingMessage {
  /** Default: a random id. */
  readonly messageId?: string;
  readonly correlationId?: string;
  readonly body: unknown;
  readonly applicationProperties?: Readonly<Record<string, string | number | boolean>>;
}

/** Sends to the queues and topics of a bus held in the process. */
export interface MessageSender {
  /**
   * Sends `messages` to the queue or topic `entity` in one step, before returning. With `detectDuplicates`, a message
   * whose id the entity saw within its duplicate-detection window is dropped, as Service Bus duplicate detection does.
   * @returns how many were sent (the others were duplicates).
   * @throws Error when the entity refuses them (a full durable queue); none of them is sent.
   */
  sendMany(entity: string, messages: readonly OutgoingMessage[], detectDuplicates: boolean): number;
}

/**
 * The setting to name when a part that sends (the async results publisher, the case hand-off) has no Service Bus
 * namespace and no bus from the host: the field error of its `config_invalid`.
 */
export const NO_BUS: FieldError = {
  path: 'ServiceBusConnection__fullyQualifiedNamespace',
  message: 'set ServiceBusConnection__fullyQualifiedNamespace, or run under a host that passes its bus (npm start)',
};
