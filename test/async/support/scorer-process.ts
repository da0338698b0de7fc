/**
 * One app instance for the two-process exactly-once test, in its own process: the real engine (Redis
 * result store and lock from the environment's REDIS_URL / REDIS_KEY_PREFIX, the bundled model) publishing
 * with the real `ServiceBusTopicPublisher` to the AMQP peer at `AMQP_PEER_CONNECTION_STRING`.
 *
 * The parent plays Service Bus: it sends `{ id, body, meta, crashAt? }` over IPC and gets back
 * `{ id, outcome, runs }` or `{ id, error }`. `crashAt` kills this process with SIGKILL at one failure point:
 * `scoring` (before the result is stored), `before-publish` (stored, not published) or `after-publish`
 * (the broker accepted the message; not yet marked as published).
 */
import { createEngine } from '../../../lib/app';
import type { MessageMeta } from '../../../lib/async/async-scorer';
import type { ResultPublisher } from '../../../lib/async/result-publisher';
import { ServiceBusTopicPublisher } from '../../../lib/async/service-bus-publisher';
import { testConfig } from '../../support/config';
import type { BackendFactory } from '../../../lib/inference/backend';
import { inlineBackendFactory } from '../../../lib/inference/ort-session';
import { silentLogger } from '../../../lib/platform/logger';

/** A failure point the child can crash at. */
export type CrashPoint = 'scoring' | 'before-publish' | 'after-publish';

/** A delivery from the parent. */
export interface Delivery {
  readonly id: number;
  readonly body: string;
  readonly meta: MessageMeta;
  readonly crashAt?: CrashPoint;
}

/** The child's answer. */
export type DeliveryReply =
  | { readonly id: number; readonly outcome: { kind: string; replayed?: boolean }; readonly runs: number }
  | { readonly id: number; readonly error: string };

const crash = (): never => {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable');
};

async function main(): Promise<void> {
  const config = testConfig(process.env);
  let crashAt: CrashPoint | undefined;
  let runs = 0; // inferences of scored events (warm-up excluded)
  const real = inlineBackendFactory({ executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' });
  const backendFactory: BackendFactory = {
    load: async (model) => {
      const b = await real.load(model);
      let warmed = false;
      return {
        info: b.info,
        run: (input, rows, o) => {
          if (warmed) {
            if (crashAt === 'scoring') crash();
            runs++;
          }
          warmed = true;
          return b.run(input, rows, o);
        },
        infer: (r, o) => b.infer(r, o),
        dispose: () => b.dispose(),
      };
    },
  };
  const sb = await ServiceBusTopicPublisher.create(
    { connectionString: String(process.env['AMQP_PEER_CONNECTION_STRING']) },
    config.serviceBus.resultsTopic,
  );
  const publisher: ResultPublisher = {
    publish: async (m) => {
      if (crashAt === 'before-publish') crash();
      await sb.publish(m);
      if (crashAt === 'after-publish') crash();
    },
    dispose: () => sb.dispose(),
  };
  const engine = await createEngine(config, { logger: silentLogger, backendFactory, publisher });
  await engine.start();
  process.on('message', (d: Delivery) => {
    crashAt = d.crashAt;
    const before = runs;
    engine.processMessage(d.body, d.meta).then(
      (outcome) => process.send?.({ id: d.id, outcome, runs: runs - before } satisfies DeliveryReply),
      (err: unknown) =>
        process.send?.({ id: d.id, error: (err as { code?: string }).code ?? String(err) } satisfies DeliveryReply),
    );
  });
  process.on('disconnect', () => void engine.dispose().finally(() => process.exit(0)));
  process.send?.('ready');
}

// `node --test dist/test/` loads every file, this one included: only start when asked to.
if (process.env['ASYNC_TEST_SCORER'] === '1') {
  main().catch((err: unknown) => {
    process.stderr.write(`scorer process failed: ${String(err)}\n`);
    process.exit(1);
  });
}
