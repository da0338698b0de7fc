/** Request bodies of the benchmark's load: valid payment events, a new transaction each time. */

/** Distinct users the load spreads over (a realistic mix of warm and cold contexts, no single hot user). */
export const USERS = 1000;
let seq = 0;

/** A valid payment event, a new transaction each time, from one of {@link USERS} users. */
export function paymentBody(): string {
  seq++;
  return `{"transactionId":"tx-${seq}","userId":"user-${seq % USERS}","sessionId":"sess-1","amount":${(seq % 500) + 9.95},"currency":"EUR","merchantId":"m-991","merchantCategory":"5411","country":"FR","ipCountry":"FR","deviceId":"dev-abc","channel":"web","timestamp":"2026-11-30T10:15:00+01:00"}`;
}
