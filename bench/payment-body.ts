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
