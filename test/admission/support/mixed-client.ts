/**
 * A client process for `test/admission/load-http.test.ts`: sends `n` requests at once on fresh connections
 * to `/api/score` (`score`) or to the OIP infer route of the bundled model (`oip`), every other one valid and
 * the rest bad in a few ways (not JSON, missing or mistyped fields, a bad `x-deadline-ms`), and prints each
 * answer's status beside whether its request was valid.
 * Usage: `node mixed-client.js <url> <score|oip> <n>`.
 */
import { FEATURE_COUNT } from '../../../lib/features/featurizer';
import { validEvent } from '../../support/events';
import { runClient } from './client-process';
import { http } from '../../support/http';

/** One answer: whether its request was valid, and its status. */
export interface MixedAnswer {
  readonly good: boolean;
  readonly status: number;
  readonly code?: string;
}

type Request = { readonly good: boolean; readonly body: string; readonly headers?: Record<string, string> };

function scoreRequest(i: number): Request {
  const event = validEvent({ transactionId: `mix-${i}`, userId: `mix-user-${i % 20}` });
  if (i % 2 === 0) return { good: true, body: JSON.stringify(event) };
  const bad: Request[] = [
    { good: false, body: '{"transactionId":' },
    { good: false, body: JSON.stringify({ ...event, amount: 'ten', currency: 7 }) },
    { good: false, body: '{}' },
    { good: false, body: JSON.stringify(event), headers: { 'x-deadline-ms': 'soon' } },
  ];
  return bad[((i - 1) / 2) % bad.length] as Request;
}

function oipRequest(i: number): Request {
  const row = Array.from({ length: FEATURE_COUNT }, (_, k) => Math.sin(i + k));
  const input = { name: 'features', shape: [1, FEATURE_COUNT], datatype: 'FP32', data: row };
  if (i % 2 === 0) return { good: true, body: JSON.stringify({ inputs: [input] }) };
  const bad: Request[] = [
    { good: false, body: '{"inputs":[' },
    { good: false, body: JSON.stringify({ inputs: [{ ...input, shape: [1, FEATURE_COUNT + 1] }] }) },
    { good: false, body: JSON.stringify({ inputs: [{ ...input, datatype: 'NOPE' }] }) },
    { good: false, body: '{}' },
  ];
  return bad[((i - 1) / 2) % bad.length] as Request;
}

async function main(): Promise<MixedAnswer[]> {
  const [url, route, n = '200'] = process.argv.slice(2);
  if (url === undefined || (route !== 'score' && route !== 'oip'))
    throw new Error('usage: mixed-client <url> <score|oip> [n]');
  const target = `${url}/api/${route === 'score' ? 'score' : 'v2/models/fraud/infer'}`;
  const requests = Array.from({ length: Number(n) }, (_, i) => (route === 'score' ? scoreRequest(i) : oipRequest(i)));
  return Promise.all(
    requests.map(async ({ good, body, headers }) => {
      const r = await http().post(target, body, {
        fresh: true,
        timeoutMs: 60_000,
        ...(headers === undefined ? {} : { headers }),
      });
      const code = r.json['code'];
      return { good, status: r.status, ...(typeof code === 'string' ? { code } : {}) };
    }),
  );
}

if (require.main === module) runClient('mixed-client', main);
