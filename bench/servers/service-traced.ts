/**
 * The telemetry benchmark's tracing-on arm: variant (d) (this service through the local Functions host)
 * with tracing and metrics fully on, exporting to sinks that discard (span cost without I/O): a batch span
 * processor as in production, and a periodic metric reader. Tracing is started before the app loads, so
 * the preload keeps this setup.
 *
 * `BENCH_TELEMETRY` picks a part, for `bench/telemetry-decompose.ts`: `on` (default: all of it), `spans`
 * (tracing only), `metrics` (metrics only), `context` (only an active `AsyncLocalStorage`: the async context
 * tracking that OpenTelemetry's context manager, ours or `applicationinsights'`, turns on for every promise),
 * `deployed` (tracing sampled as the Azure Monitor distro samples by default, its `RateLimitedSampler` at 5
 * traces/s, plus metrics).
 */
import { AsyncLocalStorage } from 'node:async_hooks';
import { metrics } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { loadTelemetrySettings } from '../../lib/config/telemetry-settings';
import { DiscardingSpanExporter } from '../../lib/telemetry/json-span-exporter';
import { startTracing } from '../../lib/telemetry/tracing';

/** The Azure Monitor distro's default sampling: `tracesPerSecond` 5 (its `RateLimitedSampler`). */
const DISTRO_TRACES_PER_SECOND = 5;

const part = process.env['BENCH_TELEMETRY'] ?? 'on';
if (part === 'on' || part === 'spans')
  startTracing(loadTelemetrySettings({}), { exporter: new DiscardingSpanExporter(), processor: 'batch' });
if (part === 'deployed') {
  // the distro's own sampler class (a dependency of `applicationinsights`), loaded only for this arm
  type Exporter = typeof import('@azure/monitor-opentelemetry-exporter');
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { RateLimitedSampler } = require('@azure/monitor-opentelemetry-exporter') as Exporter;
  startTracing(loadTelemetrySettings({}), {
    exporter: new DiscardingSpanExporter(),
    processor: 'batch',
    sampler: new RateLimitedSampler(DISTRO_TRACES_PER_SECOND),
  });
}
if (part === 'on' || part === 'metrics' || part === 'deployed')
  metrics.setGlobalMeterProvider(
    new MeterProvider({
      readers: [
        new PeriodicExportingMetricReader({
          exporter: {
            export: (_batch, done) => done({ code: ExportResultCode.SUCCESS }),
            forceFlush: () => Promise.resolve(),
            shutdown: () => Promise.resolve(),
          },
          exportIntervalMillis: 5000,
        }),
      ],
    }),
  );
if (part === 'context') new AsyncLocalStorage<object>().enterWith({});
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./service');
