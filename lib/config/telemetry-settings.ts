/**
 * The telemetry slice of the settings. Parsed with the rest by `loadConfig`, and on its own by the
 * telemetry preload (`lib/telemetry/preload.ts`), which must start tracing before anything else loads.
 */
import { z } from 'zod';
import { configInvalid } from './config-error';

const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);

/** Where finished spans go: nowhere (tracing off), stdout as JSON lines, or an OTLP/HTTP collector. */
export type TracesExporter = 'none' | 'console' | 'otlp';

/** The environment variables of the telemetry slice (merged into the config's schema). */
export const telemetryEnvShape = {
  APPLICATIONINSIGHTS_CONNECTION_STRING: z
    .preprocess(emptyToUndefined, z.string().optional())
    .describe('Export traces, metrics and logs to Application Insights (Azure Monitor distro).'),
  OTEL_TRACES_EXPORTER: z
    .preprocess(
      (v) => (typeof v === 'string' ? (emptyToUndefined(v.toLowerCase()) as unknown) : v),
      z.enum(['none', 'console', 'otlp'], { error: 'must be none, console or otlp' }).default('none'),
    )
    .describe('Local tracing: `console` (one JSON line per span on stdout), `otlp` (OTLP/HTTP) or `none`.'),
  OTEL_EXPORTER_OTLP_ENDPOINT: z
    .preprocess(
      emptyToUndefined,
      z.url({ error: 'must be a URL like http://localhost:4318' }).default('http://localhost:4318'),
    )
    .describe('OTLP/HTTP collector; spans go to `{endpoint}/v1/traces`.'),
  OTEL_SERVICE_NAME: z
    .preprocess(emptyToUndefined, z.string().max(128).default('onnx-scoring'))
    .describe('The `service.name` resource attribute (Application Insights cloud role).'),
  TELEMETRY_USER_ID_KEY: z
    .preprocess(emptyToUndefined, z.string().min(16, { error: 'must be at least 16 characters' }).optional())
    .describe('HMAC key of the `user.id` span attribute (≥ 16 characters); unset = a random key per process.'),
};

/** Telemetry settings. */
export interface TelemetrySettings {
  /** `APPLICATIONINSIGHTS_CONNECTION_STRING`: set = Azure Monitor (traces, metrics, logs) via `useAzureMonitor`. */
  readonly appInsightsConnectionString: string | undefined;
  /** `OTEL_TRACES_EXPORTER` (default `none`): `console` = one JSON object per finished span on stdout; `otlp` = OTLP/HTTP. */
  readonly tracesExporter: TracesExporter;
  /** `OTEL_EXPORTER_OTLP_ENDPOINT` (default `http://localhost:4318`); spans go to `{endpoint}/v1/traces`. */
  readonly otlpEndpoint: string;
  /** `OTEL_SERVICE_NAME` (default `onnx-scoring`): the `service.name` resource attribute (App Insights cloud role). */
  readonly serviceName: string;
  /**
   * `TELEMETRY_USER_ID_KEY`: HMAC key for the `user.id` span attribute (at least 16 characters; keep it in Key
   * Vault). Unset: a random key per process, so hashes correlate within one instance only.
   */
  readonly userIdKey: string | undefined;
}

type TelemetryEnv = z.infer<z.ZodObject<typeof telemetryEnvShape>>;

/** The slice from parsed settings. */
export function telemetrySettingsFrom(e: TelemetryEnv): TelemetrySettings {
  return Object.freeze({
    appInsightsConnectionString: e.APPLICATIONINSIGHTS_CONNECTION_STRING,
    tracesExporter: e.OTEL_TRACES_EXPORTER,
    otlpEndpoint: e.OTEL_EXPORTER_OTLP_ENDPOINT.replace(/\/+$/, ''),
    serviceName: e.OTEL_SERVICE_NAME,
    userIdKey: e.TELEMETRY_USER_ID_KEY,
  });
}

/**
 * Parses only the telemetry settings.
 * @throws AppError `config_invalid` naming every bad setting (never its value).
 */
export function loadTelemetrySettings(env: Readonly<Record<string, string | undefined>>): TelemetrySettings {
  const r = z.object(telemetryEnvShape).safeParse(env);
  if (!r.success) throw configInvalid(r.error);
  return telemetrySettingsFrom(r.data);
}
