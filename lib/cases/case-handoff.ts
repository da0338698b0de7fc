/**
 * Where the case writer hands a review case off: a durable queue (`CASE_INTAKE_QUEUE`) that the `caseIntake`
 * function drains into the case store (lib/cases/case-intake.ts). Message id = transaction id, so the queue's
 * duplicate detection drops a repeat; the store's `ON CONFLICT (transaction_id) DO NOTHING` drops what gets through.
 * Azure: a Service Bus queue (lib/cases/service-bus-handoff.ts). `npm start`: the embedded bus, whose intake queue
 * is journalled on disk (local/bus-journal.ts).
 */
import type { MessageSender, OutgoingMessage } from '../async/message-bus';
import type { NewCase } from './case-store';

/** A durable queue cases are handed to. */
export interface CaseHandOff {
  /**
   * Hands `cases` off; resolves once the queue holds them, with how many it refused for good (a case larger than a
   * message may be). Throws when it could not reach the queue (the writer retries).
   */
  send(cases: readonly NewCase[]): Promise<{ readonly refused: number }>;
  /**
   * Hands `cases` off before returning, when the queue can (the embedded bus: one append to its journal), so that
   * the payment's answer is sent after its case is durable. Absent when the queue is remote. Throws as `send`.
   */
  readonly sendNow?: (cases: readonly NewCase[]) => void;
  dispose(): Promise<void>;
}

/** The message of one case: id = transaction id, body = the case. */
export function caseMessage(c: NewCase): OutgoingMessage & { readonly messageId: string } {
  return { messageId: c.transactionId, body: c };
}

/** The embedded bus's intake queue (`npm start`), with duplicate detection as the Service Bus queue has it. */
export class BusCaseHandOff implements CaseHandOff {
  constructor(
    private readonly bus: MessageSender,
    private readonly queue: string,
  ) {}

  readonly sendNow = (cases: readonly NewCase[]): void => {
    this.bus.sendMany(this.queue, cases.map(caseMessage), true);
  };

  send(cases: readonly NewCase[]): Promise<{ readonly refused: number }> {
    try {
      this.sendNow(cases);
      return Promise.resolve({ refused: 0 });
    } catch (err) {
      return Promise.reject(err as Error);
    }
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
