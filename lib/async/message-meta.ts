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

/**
 * Reads the metadata of each message of a batch (`cardinality: 'many'`): the host sends the per-message
 * fields as arrays (`messageIdArray`, `deliveryCountArray`, `enqueuedTimeUtcArray`, `correlationIdArray`,
 * `applicationPropertiesArray`), index i for message i. Missing arrays or entries leave the field out.
 * @param count messages in the batch.
 */
export function batchMessageMeta(
  triggerMetadata: Readonly<Record<string, unknown>> | undefined,
  count: number,
): MessageMeta[] {
  const t = triggerMetadata ?? {};
  const column = (name: string): readonly unknown[] => {
    const v = t[`${name}Array`];
    return Array.isArray(v) ? v.map((x: unknown) => x ?? undefined) : []; // JSON nulls: absent
  };
  const ids = column('messageId');
  const counts = column('deliveryCount');
  const enqueued = column('enqueuedTimeUtc');
  const correlations = column('correlationId');
  const props = column('applicationProperties');
  return Array.from({ length: count }, (_, i) =>
    messageMeta({
      messageId: ids[i],
      deliveryCount: counts[i],
      enqueuedTimeUtc: enqueued[i],
      correlationId: correlations[i],
      applicationProperties: props[i],
    }),
  );
}
