import type { MessageMeta } from './async-scorer';

const str = (v: unknown): string | undefined =>
  typeof v === 'string' ? v : typeof v === 'number' ? String(v) : undefined;

/**
 * Reads the Service Bus trigger metadata the engine uses (`messageId`, `deliveryCount`,
 * `enqueuedTimeUtc`, `correlationId`, `applicationProperties`) from `InvocationContext.triggerMetadata`.
 * Tolerates missing or oddly typed fields (the library JSON-parses strings, so a numeric id arrives as a number).
 */
export function messageMeta(triggerMetadata: Readonly<Record<string, unknown>> | undefined): MessageMeta {
  const t = triggerMetadata ?? {};
  const deliveryCount = Number(t['deliveryCount']);
  const props = t['applicationProperties'];
  const messageId = str(t['messageId']);
  const correlationId = str(t['correlationId']);
  const enqueuedTimeUtc = str(t['enqueuedTimeUtc']);
  return {
    ...(messageId === undefined ? {} : { messageId }),
    ...(Number.isFinite(deliveryCount) ? { deliveryCount } : {}),
    ...(enqueuedTimeUtc === undefined ? {} : { enqueuedTimeUtc }),
    ...(correlationId === undefined ? {} : { correlationId }),
    ...(props !== null && typeof props === 'object' ? { applicationProperties: props as Record<string, unknown> } : {}),
  };
}
