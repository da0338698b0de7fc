/** Request bodies of the benchmark's load: valid payment events, a new transaction each time. */

/** Distinct users the load spreads over (a realistic mix of warm and cold contexts, no single hot user). */
export const USERS = 1000;
let seq = 0;

/** A valid payment event, a new transaction each time, from one of {@link USERS} users. */
export function paymentBody(): string {
  seq++;
  return `{"transactionId":"tx-${seq}","userId":"user-${seq % USERS}","sessionId":"sess-1","amount":${(seq % 500) + 9.95},"currency":"EUR","merchantId":"m-991","merchantCategory":"5411","country":"FR","ipCountry":"FR","deviceId":"dev-abc","channel":"web","timestamp":"2026-11-30T10:15:00+01:00"}`;
}

/** Users of {@link newUserPaymentBody}: so many that a user pays about once per run (velocity stays near zero). */
export const MANY_USERS = 1_000_000;

/**
 * A valid payment event from one of {@link MANY_USERS} users: the model sees first payments only, so the share of
 * reviews is what the ruleset says (the `cases` arms of bench/cpu.ts), not what repeated payments add.
 */
export function newUserPaymentBody(): string {
  seq++;
  return `{"transactionId":"tx-${seq}","userId":"nu-${seq % MANY_USERS}","sessionId":"sess-1","amount":${(seq % 500) + 9.95},"currency":"EUR","merchantId":"m-991","merchantCategory":"5411","country":"FR","ipCountry":"FR","deviceId":"dev-abc","channel":"web","timestamp":"2026-11-30T10:15:00+01:00"}`;
}

/** Cards, devices, IP addresses and emails of {@link richPaymentBody}: shared across users as real ones are. */
const CARDS = 1500;
const DEVICES = 1200;
const IPS = 800;
const EMAILS = 1000;

/**
 * A valid payment event with the fraud-signal fields (email, IP address, card BIN/last 4/fingerprint, addresses, user
 * agent): the load of the signals arms (bench/signals.ts), where aggregates are counted per user, card fingerprint,
 * device, IP address and email.
 */
export function richPaymentBody(): string {
  seq++;
  const u = seq % USERS;
  const ip = `10.${(seq % IPS) >> 8}.${(seq % IPS) & 255}.7`;
  return `{"transactionId":"tx-${seq}","userId":"user-${u}","sessionId":"sess-1","amount":${(seq % 500) + 9.95},"currency":"EUR","merchantId":"m-991","merchantCategory":"5411","country":"FR","ipCountry":"FR","deviceId":"dev-${seq % DEVICES}","channel":"web","timestamp":"2026-11-30T10:15:00+01:00","email":"buyer${seq % EMAILS}@example.net","ipAddress":"${ip}","card":{"bin":"497010","last4":"0042","fingerprint":"tok_${seq % CARDS}"},"billingAddress":{"country":"FR","postalCode":"75011"},"shippingAddress":{"country":"FR","postalCode":"75011"},"userAgent":"Mozilla/5.0 (X11; Linux x86_64) bench"}`;
}
