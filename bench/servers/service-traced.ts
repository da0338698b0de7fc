/**
 * The telemetry benchmark's tracing-on arm: variant (d) (this service through the local Functions host)
 * with tracing and metrics fully on, exporting to sinks that discard (span cost without I/O): a batch span
 * processor as in production, and a periodic metric reader. Tracing is started before the app loads, so
 * the preload keeps this setup.
 */
import { metrics } from '@opentelemetry/api';
import { ExportResultCode } from '@opentelemetry/core';
import { MeterProvider, PeriodicExportingMetricReader } from '@opentelemetry/sdk-metrics';
import { loadTelemetrySettings } from '../../lib/config/telemetry-settings';
import { DiscardingSpanExporter } from '../../lib/telemetry/json-span-exporter';
import { startTracing } from '../../lib/telemetry/tracing';

startTracing(loadTelemetrySettings({}), { exporter: new DiscardingSpanExporter(), processor: 'batch' });
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
// eslint-disable-next-line @typescript-eslint/no-require-imports
require('./service');
