/**
 * The chaos tests' load client, in its own process: `node review-load-client.js <api url> <rate/s> <seconds> <tx
 * prefix>` sends review-bound payments (the shipped ruleset reviews 1000 or more from a device the user has not used
 * before) at a fixed rate, open loop (each request at its due time, whatever the previous ones do), and prints one
 * line per answer as it comes: `<transactionId> <status> <decision, or the problem's code>` (status 0: no answer,
 * e.g. the host was killed). Prints `DONE` when every request has ended.
 */
import { validEvent } from '../support/events';

async function main(): Promise<void> {
  const [url, rate, seconds, prefix] = process.argv.slice(2);
  if (url === undefined || prefix === undefined) throw new Error('usage: <url> <rate> <seconds> <prefix>');
  const total = Math.round(Number(rate) * Number(seconds));
  const intervalMs = 1000 / Number(rate);
  const start = performance.now();
  const inflight: Promise<void>[] = [];
  const one = async (i: number): Promise<void> => {
    const tx = `${prefix}-${i}`;
    const body = validEvent({ transactionId: tx, userId: `user-${tx}`, amount: 2500, deviceId: `dev-new-${tx}` });
    let status = 0;
    let decision = '-';
    try {
      const res = await fetch(`${url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify(body),
        signal: AbortSignal.timeout(30_000),
      });
      status = res.status;
      const json = (await res.json()) as { decision?: string; code?: string };
      decision = json.decision ?? json.code ?? '-'; // a problem's code (e.g. overloaded) when refused
    } catch {
      // no answer (the host is gone, or the request timed out): status 0
    }
    process.stdout.write(`${tx} ${status} ${decision}\n`);
  };
  for (let i = 0; i < total; i++) {
    const due = start + i * intervalMs;
    const wait = due - performance.now();
    if (wait > 0) await new Promise((r) => setTimeout(r, wait));
    inflight.push(one(i));
  }
  await Promise.all(inflight);
  process.stdout.write('DONE\n');
}

main().catch((err: unknown) => {
  console.error(err);
  process.exit(1);
});
