/**
 * The naive Functions app (the fair peer of the service): one http function written the plain way with the
 * real `@azure/functions` programming model: a module-scope ONNX Runtime session (default options), one
 * Redis GET per request, the same validation and features as the service, and an inline `session.run()`
 * on the event loop. No batching, no deadlines, no shedding. Served by the local host (naive-functions.ts).
 * Settings (env): BENCH_MODEL (path to .onnx), BENCH_REDIS_URL.
 */
import { app } from '@azure/functions';
import Redis from 'ioredis';
import * as ort from 'onnxruntime-node';
import { FEATURE_COUNT, featurize } from '../../lib/features/featurizer';
import { NO_HISTORY, type UserContext } from '../../lib/domain/user-context';
import { parsePaymentEvent } from '../../lib/domain/payment-event';

let session: ort.InferenceSession | undefined;
let redis: Redis | undefined;

app.hook.appStart(async () => {
  session = await ort.InferenceSession.create(process.env['BENCH_MODEL'] ?? '');
  redis = new Redis(process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379');
});

app.hook.appTerminate(() => {
  redis?.disconnect();
});

app.http('score', {
  route: 'score',
  methods: ['POST'],
  authLevel: 'anonymous',
  handler: async (request) => {
    const s = session as ort.InferenceSession;
    try {
      const event = parsePaymentEvent(await request.json());
      const cached = await (redis as Redis).get(`bench:naive:profile:${event.userId}`);
      const ctx: UserContext =
        cached === null ? NO_HISTORY : { ...NO_HISTORY, profile: JSON.parse(cached) as UserContext['profile'] };
      const row = featurize(event, ctx, new Float32Array(FEATURE_COUNT));
      const out = await s.run({ [s.inputNames[0] as string]: new ort.Tensor('float32', row, [1, FEATURE_COUNT]) });
      const score = (out[s.outputNames[0] as string]?.data as Float32Array)[0] ?? Number.NaN;
      return { jsonBody: { transactionId: event.transactionId, score } };
    } catch (err) {
      return { status: 400, jsonBody: { error: (err as Error).message } };
    }
  },
});
