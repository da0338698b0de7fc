/**
 * The fraud-signal fields of a payment event (docs/api.md "Payment fields"): email, IP address, card
 * (BIN, last 4, fingerprint), billing and shipping address, user agent and a bounded metadata map. Every string
 * is checked with the text hygiene of lib/domain/text.ts, and none may hold a card number (a 13–19 digit
 * Luhn-valid run, {@link containsCardNumber}). Email and IP address come back in one canonical form, so that
 * the same address is the same aggregate key: email as sent with its domain lower-cased, IPv6 in the RFC 5952
 * form. Messages never echo the value.
 * @module
 */
import { isIP } from 'node:net';
import { z } from 'zod';
import { containsCardNumber } from './card-number';
import { COUNTRY_CODES } from './iso-codes';
import { identifierString, textProblem, textString } from './text';

/** Message for a string that holds a card number. */
export const CARD_NUMBER_MESSAGE =
  'looks like a card number (13-19 digits passing the Luhn check): card numbers must never be sent';

/** A string schema that also refuses a card number anywhere in the value. */
function noCardNumber(s: z.ZodString): z.ZodString {
  return s.refine((v) => !containsCardNumber(v), { error: CARD_NUMBER_MESSAGE });
}

/** An ISO 3166-1 alpha-2 country code (as `country` and `ipCountry`). */
export function countryCode() {
  return z.string().refine((c) => COUNTRY_CODES.has(c), { error: 'must be an ISO 3166-1 alpha-2 code (e.g. FR)' });
}

/**
 * A card fingerprint: the merchant's or the processor's opaque token, 1–128 characters. A value holding a card
 * number is refused: card numbers must never reach this service.
 */
export const fingerprintString = identifierString({ max: 128 }).refine((v) => !containsCardNumber(v), {
  error: 'looks like a card number (13-19 digits passing the Luhn check): send the processor fingerprint',
});

/** Longest accepted email address (RFC 5321 path limit). */
export const MAX_EMAIL_CHARS = 254;
const EMAIL_MESSAGE = 'must be an email address (local@domain.tld, at most 254 characters)';
/** Local part: 1–64 characters, no whitespace and none of `@ " ( ) , : ; < > [ \ ]`. */
const LOCAL_PART = /^[^\s@"(),:;<>[\\\]]{1,64}$/u;
/** A domain label: letters or digits (any script), hyphens inside, at most 63 characters. */
const LABEL = /^[\p{L}\p{N}](?:[\p{L}\p{N}-]{0,61}[\p{L}\p{N}])?$/u;

/** Whether `v` is a plausible email address (a sane bounded check, not RFC 5322's full grammar). */
export function isEmail(v: string): boolean {
  const at = v.indexOf('@');
  if (at <= 0 || at !== v.lastIndexOf('@') || v.length > MAX_EMAIL_CHARS) return false;
  const local = v.slice(0, at);
  if (!LOCAL_PART.test(local) || local.startsWith('.') || local.endsWith('.') || local.includes('..')) return false;
  const labels = v.slice(at + 1).split('.');
  return labels.length >= 2 && labels.every((l) => LABEL.test(l)) && !/^\d+$/.test(labels.at(-1) ?? '');
}

/** An email address as sent, its domain lower-cased (the local part may be case-sensitive: kept). */
export function normaliseEmail(v: string): string {
  const at = v.lastIndexOf('@');
  return v.slice(0, at + 1) + v.slice(at + 1).toLowerCase();
}

/**
 * The canonical text of an IP address, or `undefined` when `v` is not one: IPv4 dotted decimal as sent (Node's
 * `isIP` refuses leading zeros), IPv6 in the RFC 5952 form (lower case, longest zero run compressed). A zone
 * index (`%eth0`) is refused: a payer's address never carries one.
 */
export function canonicalIp(v: string): string | undefined {
  const family = isIP(v);
  if (family === 4) return v;
  if (family !== 6 || v.includes('%')) return undefined;
  try {
    return new URL(`http://[${v}]/`).hostname.slice(1, -1);
  } catch {
    return undefined;
  }
}

/** `email`: see {@link isEmail}; comes back normalised ({@link normaliseEmail}). */
export const emailSchema = textString('identifier')
  .refine(isEmail, { error: EMAIL_MESSAGE })
  .refine((v) => !containsCardNumber(v), { error: CARD_NUMBER_MESSAGE })
  .transform(normaliseEmail);

/** `ipAddress`: IPv4 or IPv6; comes back canonical ({@link canonicalIp}). */
export const ipAddressSchema = textString('identifier')
  .max(45, { error: 'must be an IPv4 or IPv6 address' })
  .transform((v, ctx) => {
    const ip = canonicalIp(v);
    if (ip !== undefined) return ip;
    ctx.addIssue({ code: 'custom', message: 'must be an IPv4 or IPv6 address', input: v });
    return z.NEVER;
  });

/** `card`: what the merchant knows of the card, never its number. Every field optional; unknown fields refused. */
export const cardSchema = z.strictObject({
  /** Issuer identification number: the first 6 to 8 digits. */
  bin: z
    .string()
    .regex(/^\d{6,8}$/, { error: 'must be 6 to 8 digits' })
    .optional(),
  last4: z
    .string()
    .regex(/^\d{4}$/, { error: 'must be 4 digits' })
    .optional(),
  /** The same token as the top-level `cardFingerprint` (which it fills when that is absent). */
  fingerprint: fingerprintString.optional(),
});

/** `billingAddress`, `shippingAddress`: country (ISO 3166-1 alpha-2) and an optional postal code. */
export const addressSchema = z.strictObject({
  country: countryCode(),
  postalCode: noCardNumber(identifierString({ max: 16 })).optional(),
});

/** `userAgent`: at most 512 characters, no control character (tab, CR, LF included). */
export const userAgentSchema = noCardNumber(identifierString({ max: 512 }));

/** Most keys in `metadata`. */
export const MAX_METADATA_KEYS = 32;
/** Longest `metadata` key and string value, characters. */
export const MAX_METADATA_KEY_CHARS = 64;
export const MAX_METADATA_VALUE_CHARS = 256;

/** A `metadata` value. */
export type MetadataValue = string | number | boolean;

function metadataKeyProblem(k: string): string | undefined {
  if (k === '__proto__') return 'key __proto__ is reserved';
  if (k.length < 1 || k.length > MAX_METADATA_KEY_CHARS) return `key must be 1 to ${MAX_METADATA_KEY_CHARS} characters`;
  const bad = textProblem(k, 'identifier');
  if (bad !== undefined) return `key ${bad}`;
  return containsCardNumber(k) ? `key ${CARD_NUMBER_MESSAGE}` : undefined;
}

function metadataValueProblem(v: unknown): string | undefined {
  if (typeof v === 'boolean') return undefined;
  if (typeof v === 'number') return Number.isFinite(v) ? undefined : 'must be a finite number';
  if (typeof v !== 'string')
    return `must be a string (at most ${MAX_METADATA_VALUE_CHARS} characters), a finite number or a boolean`;
  if (v.length > MAX_METADATA_VALUE_CHARS) return `must be at most ${MAX_METADATA_VALUE_CHARS} characters`;
  return textProblem(v, 'freeText') ?? (containsCardNumber(v) ? CARD_NUMBER_MESSAGE : undefined);
}

/**
 * `metadata`: at most 32 keys (identifiers of 1–64 characters); values strings of at most 256 characters
 * (free text: tab, CR, LF allowed), finite numbers or booleans. Every bad key or value is named (`metadata.<key>`).
 */
export const metadataSchema = z
  .unknown()
  .superRefine((m, ctx) => {
    if (typeof m !== 'object' || m === null || Array.isArray(m)) {
      ctx.addIssue({ code: 'custom', message: 'must be an object', input: m });
      return;
    }
    const entries = Object.entries(m); // own keys as sent (`__proto__` too: refused below, never dropped silently)
    if (entries.length > MAX_METADATA_KEYS)
      ctx.addIssue({ code: 'custom', message: `must have at most ${MAX_METADATA_KEYS} keys`, input: m });
    for (const [k, v] of entries) {
      const problem = metadataKeyProblem(k) ?? metadataValueProblem(v);
      if (problem !== undefined) ctx.addIssue({ code: 'custom', path: [k], message: problem, input: v });
    }
  })
  .transform((m) => Object.fromEntries(Object.entries(m as object)) as Readonly<Record<string, MetadataValue>>);
