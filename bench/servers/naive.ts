/**
 * Variant (b): the naive service: a module-scope ONNX Runtime session (default options), one Redis GET
 * per request, the same validation and features, and an inline `session.run()` on the event loop.
 * Settings (env): BENCH_MODEL (path to .onnx), BENCH_REDIS_URL.
 */
import * as http from 'node:http';
import Redis from 'ioredis';
import * as ort from 'onnxruntime-node';
import { FEATURE_COUNT, featurize } from '../../lib/features/featurizer';
import { NO_HISTORY, type UserContext } from '../../lib/domain/user-context';
import { parsePaymentEvent } from '../../lib/domain/payment-event';
import { announce, readBody, statsRoute } from './common';

async function main(): Promise<void> {
  const session = await ort.InferenceSession.create(process.env['BENCH_MODEL'] ?? '');
  const redis = new Redis(process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
  const [inputName] = session.inputNames;
  const [outputName] = session.outputNames;
  const server = http.createServer((req, res) => {
    if (statsRoute(req, res)) return;
    void (async () => {
      try {
        const event = parsePaymentEvent(JSON.parse(await readBody(req)));
        const cached = await redis.get(`bench:naive:profile:${event.userId}`);
        const ctx: UserContext =
          cached === null ? NO_HISTORY : { ...NO_HISTORY, profile: JSON.parse(cached) as UserContext['profile'] };
        const row = featurize(event, ctx, new Float32Array(FEATURE_COUNT));
        const out = await session.run({ [inputName as string]: new ort.Tensor('float32', row, [1, FEATURE_COUNT]) });
        const score = (out[outputName as string]?.data as Float32Array)[0] ?? Number.NaN;
        const body = JSON.stringify({ transactionId: event.transactionId, score });
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(body);
      } catch (err) {
        res.writeHead(400, { 'content-type': 'application/json' });
        res.end(JSON.stringify({ error: (err as Error).message }));
      }
    })();
  });
  server.listen(0, '127.0.0.1', () => announce((server.address() as { port: number }).port));
  process.on('SIGTERM', () => process.exit(0)); // a normal exit (lets `node --cpu-prof` write its profile)
}

void main();
