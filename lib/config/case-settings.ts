/**
 * The case slice of the settings: where cases are stored (none, embedded PGlite, or a PostgreSQL server reached
 * with Entra ID), the writer's queue and batches, and who is acting on the case API (`IDENTITY_MODE`).
 */
import * as path from 'node:path';
import { z } from 'zod';
import { appRoot } from './app-root';
import { bool, emptyToUndefined, int, optStr } from './zod-helpers';

/** The case roles a development actor may be given. */
const CASE_ROLES = ['analyst', 'lead'] as const;

/** The environment variables of the case slice (merged into the config's schema). */
export const casesEnv = {
  CASE_STORE: z
    .preprocess(emptyToUndefined, z.enum(['none', 'pglite', 'postgres']).default('none'))
    .describe(
      'Where review cases are stored: `none` (no cases, the case API answers 404), `pglite` (embedded PostgreSQL in `PGLITE_DIR`; `npm start` sets it) or `postgres` (`PG_HOST`; Azure). docs/cases.md.',
    ),
  PGLITE_DIR: z
    .preprocess(emptyToUndefined, z.string().default('.data/pglite'))
    .describe('Folder of the embedded case database (`CASE_STORE=pglite`), relative to the app root.'),
  PG_HOST: optStr.describe(
    'PostgreSQL server of the cases (`CASE_STORE=postgres`), e.g. `myserver.postgres.database.azure.com`.',
  ),
  PG_PORT: int(1, 65_535, 5432).describe('PostgreSQL port.'),
  PG_DATABASE: z
    .preprocess(emptyToUndefined, z.string().min(1).max(63).default('cases'))
    .describe('PostgreSQL database of the cases.'),
  PG_USER: optStr.describe(
    "PostgreSQL user: in Azure the app's managed identity's name as the server knows it (Entra ID); required with `CASE_STORE=postgres`.",
  ),
  PG_ENTRA_AUTH: bool(false).describe(
    "Sign in to PostgreSQL with an Entra ID token of the app's identity (`AZURE_CLIENT_ID`) as the password, over TLS; no password setting exists. `false`: trust/peer auth (local server).",
  ),
  PG_POOL_MAX: int(1, 100, 10).describe('Most PostgreSQL connections of this instance.'),
  CASE_QUEUE_MAX: int(1, 1_000_000, 10_000).describe(
    'Most cases waiting in memory for their hand-off to the intake queue (while it is unreachable); more are dropped and counted (`cases.dropped`).',
  ),
  CASE_BATCH_MAX: int(1, 1000, 200).describe('Most cases per hand-off to the intake queue.'),
  CASE_FLUSH_MS: int(1, 60_000, 500).describe(
    'Longest a case waits in memory for its hand-off to a remote intake queue (Service Bus), ms; the embedded bus takes it at once.',
  ),
  CASE_INTAKE_QUEUE: z
    .preprocess(emptyToUndefined, z.string().default('case-intake'))
    .describe(
      'Durable queue review cases are handed to before the `caseIntake` function writes them to the store (`%CASE_INTAKE_QUEUE%`; Service Bus in Azure, the embedded bus journalled under `.data/bus` with `npm start`). docs/cases.md.',
    ),
  CASE_RETENTION_DAYS: int(1, 3650, 365).describe(
    'Cases decided longer ago than this are deleted by the periodic sweep, days.',
  ),
  CASE_QUEUES_FILE: optStr.describe(
    'The queues document (`{ queues: [{ name, slaHours, when? }], default }`: named queues, their SLA hours and CEL routing over the decision), a JSON file relative to the app root, read at start-up; unset = one queue, `general`, with an SLA of 24 hours. docs/cases.md#queues-and-slas.',
  ),
  CASE_SWEEP_INTERVAL_SEC: int(5, 86_400, 60).describe(
    'Time between two sweeps of the case store (retention, and the open-case gauges), s.',
  ),
  WEBHOOK_TIMEOUT_MS: int(1000, 30_000, 10_000).describe(
    'Timeout of one webhook delivery attempt, ms (at most 30 s). docs/webhooks.md.',
  ),
  WEBHOOK_RETRY_HOURS: int(24, 168, 24).describe(
    'How long a webhook delivery is retried (10 s doubling to 1 h between attempts) before it is dead-lettered, hours (at least 24). docs/webhooks.md.',
  ),
  CASE_EVENTS_TOPIC: z
    .preprocess(emptyToUndefined, z.string().default('case-events'))
    .describe(
      'Service Bus topic the case events (`review.opened`, `review.closed`) also go to, when a Service Bus namespace is configured (`ServiceBusConnection__fullyQualifiedNamespace`); under `npm start` only webhooks. docs/webhooks.md.',
    ),
  IDENTITY_MODE: z
    .preprocess(emptyToUndefined, z.enum(['easyauth', 'development', 'disabled']).default('disabled'))
    .describe(
      'Who is acting on the case API: `easyauth` (Azure with App Service / Container Apps authentication: the `x-ms-client-principal` header, which Easy Auth strips from clients and sets itself), `development` (`npm start`: `DEV_ACTOR_NAME`, or the header when sent), `disabled` (the case API answers 403 and never reads the header).',
    ),
  DEV_ACTOR_NAME: z
    .preprocess(emptyToUndefined, z.string().min(1).max(256).default('dev-analyst'))
    .describe('The default actor with `IDENTITY_MODE=development`.'),
  DEV_ACTOR_ROLES: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .default('analyst,lead')
        .transform((s) => s.split(',').map((r) => r.trim()))
        .pipe(z.array(z.enum(CASE_ROLES, { error: 'must be analyst and/or lead, comma-separated' }))),
    )
    .describe('Roles of the default development actor, comma-separated (`analyst`, `lead`).'),
};

type CasesEnv = z.infer<z.ZodObject<typeof casesEnv>>;

/** Case settings (see {@link casesSettingsFrom}). */
export interface CaseSettings {
  /** `CASE_STORE` (default `none`). */
  readonly store:
    | { readonly kind: 'none' }
    | { readonly kind: 'pglite'; readonly dir: string }
    | {
        readonly kind: 'postgres';
        readonly host: string;
        readonly port: number;
        readonly database: string;
        readonly user: string;
        readonly entraAuth: boolean;
        readonly poolMax: number;
      };
  /** `CASE_QUEUE_MAX` (10 000), `CASE_BATCH_MAX` (200), `CASE_FLUSH_MS` (500). */
  readonly queueMax: number;
  readonly batchMax: number;
  readonly flushMs: number;
  /** The intake queue (`CASE_INTAKE_QUEUE`, `case-intake`). */
  readonly intakeQueue: string;
  /** Cases decided longer ago are deleted, ms (`CASE_RETENTION_DAYS`, 365 days). */
  readonly retentionMs: number;
  /** The queues document's file, absolute (`CASE_QUEUES_FILE`); `undefined`: the built-in single queue. */
  readonly queuesFile?: string;
  /** Time between two sweeps, ms (`CASE_SWEEP_INTERVAL_SEC`, 60 s). */
  readonly sweepIntervalMs: number;
  /** Webhooks: an attempt's timeout (`WEBHOOK_TIMEOUT_MS`), the retry window (`WEBHOOK_RETRY_HOURS`), the topic. */
  readonly webhooks: {
    readonly timeoutMs: number;
    readonly retryWindowMs: number;
    /** `CASE_EVENTS_TOPIC` (`case-events`): used only with a Service Bus namespace. */
    readonly topic: string;
  };
  /** `IDENTITY_MODE` (default `disabled`) and the development actor. */
  readonly identity: {
    readonly mode: 'easyauth' | 'development' | 'disabled';
    readonly devActor: { readonly name: string; readonly roles: readonly ('analyst' | 'lead')[] };
  };
}

/** The slice from parsed settings; `CASE_STORE=postgres` needs `PG_HOST` and `PG_USER` (the errors name them). */
export function casesSettingsFrom(e: CasesEnv): { value: CaseSettings; errors: { path: string; message: string }[] } {
  const errors: { path: string; message: string }[] = [];
  let store: CaseSettings['store'] = { kind: 'none' };
  if (e.CASE_STORE === 'pglite') store = { kind: 'pglite', dir: path.resolve(appRoot(), e.PGLITE_DIR) };
  if (e.CASE_STORE === 'postgres') {
    for (const k of ['PG_HOST', 'PG_USER'] as const)
      if (e[k] === undefined) errors.push({ path: k, message: 'is required with CASE_STORE=postgres' });
    store = {
      kind: 'postgres',
      host: e.PG_HOST ?? '',
      port: e.PG_PORT,
      database: e.PG_DATABASE,
      user: e.PG_USER ?? '',
      entraAuth: e.PG_ENTRA_AUTH,
      poolMax: e.PG_POOL_MAX,
    };
  }
  return {
    value: {
      store,
      queueMax: e.CASE_QUEUE_MAX,
      batchMax: e.CASE_BATCH_MAX,
      flushMs: e.CASE_FLUSH_MS,
      intakeQueue: e.CASE_INTAKE_QUEUE,
      retentionMs: e.CASE_RETENTION_DAYS * 86_400_000,
      sweepIntervalMs: e.CASE_SWEEP_INTERVAL_SEC * 1000,
      webhooks: {
        timeoutMs: e.WEBHOOK_TIMEOUT_MS,
        retryWindowMs: e.WEBHOOK_RETRY_HOURS * 3_600_000,
        topic: e.CASE_EVENTS_TOPIC,
      },
      ...(e.CASE_QUEUES_FILE === undefined ? {} : { queuesFile: path.resolve(appRoot(), e.CASE_QUEUES_FILE) }),
      identity: { mode: e.IDENTITY_MODE, devActor: { name: e.DEV_ACTOR_NAME, roles: [...new Set(e.DEV_ACTOR_ROLES)] } },
    },
    errors,
  };
}
