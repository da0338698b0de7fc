/**
 * Imported first by every function module and by the local host's main: starts telemetry before ioredis,
 * http and the Azure SDK are loaded, as `applicationinsights` requires (it patches modules as they load).
 * The one module besides the composition root that reads `process.env`, and only the telemetry settings:
 * it must run before the composition root is even loaded.
 */
import { loadTelemetrySettings } from '../config/telemetry-settings';
import { installEarlyInvocationTracing } from './invocation-tracing';
import { startTracing } from './tracing';

const settings = loadTelemetrySettings(process.env);
// the invocation hook before useAzureMonitor's own, so that ours runs innermost (see invocation-tracing.ts)
if (settings.appInsightsConnectionString !== undefined || settings.tracesExporter !== 'none')
  installEarlyInvocationTracing();
startTracing(settings);
