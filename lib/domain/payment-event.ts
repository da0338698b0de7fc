import { z } from 'zod';
import { AppError } from '../errors/errors';
import { inputFieldErrorsOf } from '../errors/field-errors';
import { isCardNumber } from './card-number';
import { COUNTRY_CODES, CURRENCY_CODES } from './iso-codes';
import { freeText, identifierString } from './text';

/** Largest accepted `amount`, in currency units. */
export const MAX_AMOUNT = 1e9;

/** Ids: 1 to 128 characters, no control character, tab, CR, LF or lone surrogate (lib/domain/text.ts). */
const id = identifierString({ max: 128 });
const ISO_WITH_ZONE = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/;

/**
 * Schema of one payment event (HTTP body and Service Bus message body). Unknown fields are rejected, and so are
 * control characters and lone surrogates in any string (`note` may hold tab, CR and LF).
 * Messages never echo submitted values: they may be payment data.
 */
export const paymentEventSchema = z.strictObject({
  transactionId: id,
  userId: id,
  sessionId: id.optional(),
  amount: z
    .number({ error: 'must be a number' })
    .finite()
    .gt(0, { error: 'must be greater than 0' })
    .max(MAX_AMOUNT, { error: `must be at most ${MAX_AMOUNT}` }),
  currency: z.string().refine((c) => CURRENCY_CODES.has(c), { error: 'must be an ISO 4217 currency code (e.g. EUR)' }),
  merchantId: id,
  merchantCategory: z.string().regex(/^\d{4}$/, { error: 'must be a 4-digit MCC string' }),
  country: z.string().refine((c) => COUNTRY_CODES.has(c), { error: 'must be an ISO 3166-1 alpha-2 code (e.g. FR)' }),
  ipCountry: z
    .string()
    .refine((c) => COUNTRY_CODES.has(c), { error: 'must be an ISO 3166-1 alpha-2 code (e.g. FR)' })
    .optional(),
  deviceId: id.optional(),
  /**
   * Opaque card token from the payment processor (what card lists are keyed by). A card number (13–19 digits
   * passing the Luhn check) is refused: card numbers must never reach this service.
   */
  cardFingerprint: id
    .refine((v) => !isCardNumber(v), {
      error: 'looks like a card number (13-19 digits passing the Luhn check): send the processor fingerprint',
    })
    .optional(),
  channel: z.enum(['web', 'app', 'pos'], { error: 'must be one of web, app, pos' }),
  timestamp: z
    .string()
    .regex(ISO_WITH_ZONE, { error: 'must be an ISO 8601 date-time with a zone (Z or ±hh:mm)' })
    .refine((t) => Number.isFinite(Date.parse(t)), { error: 'must be a valid date-time' }),
  note: freeText({ max: 4000 }).optional(),
  /** `"deep"` asks for an LLM second opinion (README "LLM escalation"); it counts against the share cap. */
  analysis: z.enum(['deep'], { error: 'must be deep' }).optional(),
});

/** A validated payment event. */
export type PaymentEvent = z.infer<typeof paymentEventSchema>;

/**
 * Validates an already-parsed JSON value as a payment event.
 * @param prefix path prefix for reported fields (e.g. `events.3`); default none.
 * @throws AppError `validation_failed` naming every invalid field.
 */
export function parsePaymentEvent(value: unknown, prefix = ''): PaymentEvent {
  const result = paymentEventSchema.safeParse(value);
  if (result.success) return result.data;
  const errors = inputFieldErrorsOf(result.error.issues, value, prefix);
  throw new AppError('validation_failed', `${errors.length} invalid field(s).`, { errors });
}
