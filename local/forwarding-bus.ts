/**
 * The embedded bus of a forked worker process (`FUNCTIONS_WORKER_PROCESS_COUNT` > 1): what the app sends goes to the
 * host's process over IPC, where the one embedded bus (with its journal and its triggers) lives, as every worker
 * process of an instance in Azure sends to the same Service Bus namespace. The message leaves before the invocation's
 * answer on the same ordered channel, so the host holds it (journalled, for a durable queue) before it answers the
 * client.
 * @module
 */
import type { MessageSender, OutgoingMessage } from '../lib/async/message-bus';

/** A send forwarded to the host's process. */
export interface ForwardedSend {
  readonly t: 'bus';
  readonly name: string;
  readonly msgs: readonly OutgoingMessage[];
  readonly detectDuplicates: boolean;
}

/** A bus whose sends are forwarded (`forward`) to the host's embedded bus; nothing is delivered in this process. */
export class ForwardingBus implements MessageSender {
  constructor(private readonly forward: (m: ForwardedSend) => void) {}

  sendMany(name: string, msgs: readonly OutgoingMessage[], detectDuplicates = false): number {
    this.forward({ t: 'bus', name, msgs, detectDuplicates });
    return msgs.length; // duplicates are dropped in the host's bus, as the broker drops them
  }
}
