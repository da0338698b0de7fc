/**
 * Reading a payment's key fields (`userId`, `card.bin`, `billingAddress.country`, …) by accessors compiled once
 * per field: no path is split per payment.
 * @module
 */
import type { PaymentEvent } from '../domain/payment-event';
import type { KeyField } from './signals-document';

/** A key field's value in a payment (a string), or `undefined` when the payment lacks it. */
export type FieldReader = (event: PaymentEvent) => string | undefined;

const asString = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The accessor of one key field (a top-level field, or `parent.child`). */
export function fieldReader(field: KeyField): FieldReader {
  const dot = field.indexOf('.');
  if (dot < 0) return (e) => asString((e as unknown as Readonly<Record<string, unknown>>)[field]);
  const parent = field.slice(0, dot);
  const child = field.slice(dot + 1);
  return (e) => {
    const o = (e as unknown as Readonly<Record<string, unknown>>)[parent];
    return typeof o === 'object' && o !== null ? asString((o as Readonly<Record<string, unknown>>)[child]) : undefined;
  };
}

/**
 * The accessor of a key (one field or a composite): the values joined by U+0000, or `undefined` when the
 * payment lacks any of them.
 */
export function keyReader(fields: readonly KeyField[]): FieldReader {
  const readers = fields.map(fieldReader);
  if (readers.length === 1) return readers[0] as FieldReader;
  return (e) => {
    let key = '';
    for (let i = 0; i < readers.length; i++) {
      const v = (readers[i] as FieldReader)(e);
      if (v === undefined) return undefined;
      key = i === 0 ? v : `${key}\u0000${v}`;
    }
    return key;
  };
}
