/**
 * Standard Webhooks signing (https://www.standardwebhooks.com, the `standardwebhooks` package): the headers
 * `webhook-id`, `webhook-timestamp` and `webhook-signature`, where the signature header holds one `v1,<base64>`
 * signature per active secret of the endpoint, space-separated, so a receiver that knows any one of them verifies
 * (rotation: add a secret, move the receiver to it, remove the old one). Secrets are `whsec_` + base64 of 24 to 64
 * random bytes.
 * @module
 */
import { randomBytes } from 'node:crypto';
import { Webhook } from 'standardwebhooks';

/** The prefix of a secret. */
export const SECRET_PREFIX = 'whsec_';
/** Bytes of a generated secret. */
const GENERATED_BYTES = 32;
const MIN_BYTES = 24;
const MAX_BYTES = 64;
const BASE64 = /^[A-Za-z0-9+/]+={0,2}$/;

/** A new random secret, `whsec_` + base64 of 32 bytes. */
export function generateSecret(random: (n: number) => Buffer = randomBytes): string {
  return SECRET_PREFIX + random(GENERATED_BYTES).toString('base64');
}

/** Why `secret` is not a usable secret, or `undefined` when it is. */
export function secretProblem(secret: string): string | undefined {
  const message = `must be ${SECRET_PREFIX} followed by the base64 of ${MIN_BYTES} to ${MAX_BYTES} bytes`;
  if (!secret.startsWith(SECRET_PREFIX)) return message;
  const b64 = secret.slice(SECRET_PREFIX.length);
  if (!BASE64.test(b64) || b64.length % 4 !== 0) return message;
  const n = Buffer.from(b64, 'base64').length;
  return n < MIN_BYTES || n > MAX_BYTES ? message : undefined;
}

/** The Standard Webhooks headers of one attempt. */
export interface SignedHeaders {
  readonly 'webhook-id': string;
  readonly 'webhook-timestamp': string;
  readonly 'webhook-signature': string;
}

/**
 * The headers of `payload` sent as message `id` at `at` (ms since the epoch), signed with every secret of
 * `secrets` (at least one).
 * @throws Error when `secrets` is empty.
 */
export function signedHeaders(id: string, at: number, payload: string, secrets: readonly string[]): SignedHeaders {
  if (secrets.length === 0) throw new Error('an endpoint has at least one secret');
  const when = new Date(at);
  const signatures = secrets.map((s) => new Webhook(s).sign(id, when, payload));
  return {
    'webhook-id': id,
    'webhook-timestamp': String(Math.floor(at / 1000)),
    'webhook-signature': signatures.join(' '),
  };
}
