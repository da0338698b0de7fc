import type { InProcessBus } from '../../lib/async/in-process-bus';
import { LocalHost } from '../../local/host';
import { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { functionModules } from './host';

/** Settings of {@link startHostWithBus}. */
export interface HostWithBusOptions {
  /** The process's bus (`inProcessBus()`), the one the test's publisher writes to. */
  readonly bus: InProcessBus;
  /** `REDIS_KEY_PREFIX` of the test's Redis (`testRedis().prefix`). */
  readonly redisPrefix: string;
  /** Deliveries before a message is dead-lettered. */
  readonly maxDeliveryCount: number;
  /** Most messages per call of the batch trigger (host.json `maxMessageBatchSize`). */
  readonly maxMessageBatchSize: number;
}

/**
 * Starts the local host on a free port with the app's real functions, fed by an embedded Service Bus on `bus`
 * (which also serves its `/local/…` routes). First sets `process.env`: Redis at 127.0.0.1:6379 under
 * `redisPrefix`, queue `payments`, topic `risk-completed`, rejected queue `scoring-rejected`, and no background
 * readiness probe (`HEALTH_PROBE_INTERVAL_SEC=3600`, so only the test's requests run the model). Call it after
 * `configureSharedEngine`; the caller stops the bus, then disposes the host.
 */
export async function startHostWithBus(opts: HostWithBusOptions): Promise<{ host: LocalHost; sb: ServiceBusEmulator }> {
  Object.assign(process.env, {
    REDIS_URL: 'redis://127.0.0.1:6379',
    REDIS_KEY_PREFIX: opts.redisPrefix,
    SCORING_QUEUE: 'payments',
    RESULTS_TOPIC: 'risk-completed',
    REJECTED_QUEUE: 'scoring-rejected',
    HEALTH_PROBE_INTERVAL_SEC: '3600',
  });
  const sb = new ServiceBusEmulator({
    bus: opts.bus,
    maxDeliveryCount: opts.maxDeliveryCount,
    maxMessageBatchSize: opts.maxMessageBatchSize,
  });
  const host = await LocalHost.create({
    port: 0,
    appModules: await functionModules(),
    log: () => undefined,
    extraRoutes: sb.route,
  });
  sb.start(host);
  return { host, sb };
}
