/**
 * A client process for `test/admission/load-http.test.ts`: the benchmark's open-loop client
 * (`test/support/load/open-loop.ts`) sending valid payments (`test/support/load/payment-body.ts`) to `POST /api/score` at a fixed
 * rate, each when due. Prints its figures (`OpenLoopFigures`) and `ok`, how many were answered 2xx.
 * Usage: `node open-loop-client.js <url> <rate> <durationSec>`.
 */
import { openLoop, type OpenLoopFigures } from '../../support/load/open-loop';
import { paymentBody } from '../../support/load/payment-body';
import { runClient } from './client-process';

/** What the client prints: the open-loop figures and how many answers were 2xx. */
export interface FixedRateFigures extends OpenLoopFigures {
  readonly ok: number;
}

async function main(): Promise<FixedRateFigures> {
  const [url, rate = '400', durationSec = '10'] = process.argv.slice(2);
  if (url === undefined) throw new Error('usage: open-loop-client <url> [rate] [durationSec]');
  let ok = 0;
  const figures = await openLoop({
    url,
    path: '/api/score',
    body: paymentBody,
    rate: Number(rate),
    durationSec: Number(durationSec),
    onAnswer: () => ok++,
  });
  return { ...figures, ok };
}

if (require.main === module) runClient('open-loop-client', main);
