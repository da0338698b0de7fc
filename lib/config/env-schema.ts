/**
 * The settings the app reads from the environment, as one zod schema ({@link envSchema}), and the list of
 * them with their defaults ({@link configSettings}) that the infrastructure contract test reads. The settings of
 * each concern are declared beside it (`env-schema-*.ts`, `*-settings.ts`); `config.ts` turns the parsed settings
 * into the frozen `Config` slices.
 */
import { z } from 'zod';
import { decisioningEnv } from './env-schema-decisioning';
import { engineEnv } from './env-schema-engine';
import { rolloutEnv } from './env-schema-rollout';
import { storesEnv } from './env-schema-stores';
import { escalationEnv } from './escalation-settings';
import { learningEnv } from './learning-settings';
import { casesEnv } from './case-settings';
import { telemetryEnvShape } from './telemetry-settings';
import { bool, emptyToUndefined, int } from './zod-helpers';

export { PROVIDERS } from './env-schema-engine';

/** Settings read from the environment (app settings in Azure, `local.settings.json` / env locally), in docs order. */
const envShape = z.object({
  ...engineEnv,
  ...storesEnv,
  SCORE_BODY_LIMIT_BYTES: int(1024, 16 * 1024 ** 2, 64 * 1024).describe('Body limit of `POST /api/score`, bytes.'),
  BATCH_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 1024 * 1024).describe(
    'Body limit of `POST /api/score/batch`, bytes.',
  ),
  OIP_BODY_LIMIT_BYTES: int(1024, 64 * 1024 ** 2, 4 * 1024 * 1024).describe(
    'Body limit of `POST /api/v2/models/…/infer`, bytes.',
  ),
  BATCH_MAX_EVENTS: int(1, 10_000, 256).describe('Most events in one `POST /api/score/batch` request.'),
  LOG_LEVEL: z
    .preprocess(emptyToUndefined, z.enum(['debug', 'info', 'warn', 'error']).default('info'))
    .describe('Lowest level of log lines written.'),
  WARMUP_ON_START: bool(true).describe('Load and warm the model in the app-start hook.'),
  ...telemetryEnvShape,
  ...rolloutEnv,
  ...decisioningEnv,
  ...escalationEnv,
  ...learningEnv,
  ...casesEnv,
});

/** {@link envShape} with the checks that span settings. */
export const envSchema = envShape.superRefine((e, ctx) => {
  // A stored result may be re-published (crash after publish, before the mark) as long as it is kept: the
  // topic must still drop that re-publication as a duplicate, so its window must cover the whole TTL.
  if (e.IDEMPOTENCY_TTL_SEC > e.RESULTS_DUPLICATE_WINDOW_SEC) {
    for (const path of ['IDEMPOTENCY_TTL_SEC', 'RESULTS_DUPLICATE_WINDOW_SEC'])
      ctx.addIssue({
        code: 'custom',
        path: [path],
        message: `IDEMPOTENCY_TTL_SEC (${e.IDEMPOTENCY_TTL_SEC}) must not exceed RESULTS_DUPLICATE_WINDOW_SEC (${e.RESULTS_DUPLICATE_WINDOW_SEC}), the results topic's duplicate-detection window`,
      });
  }
});

/** One setting the app reads (see {@link configSettings}). */
export interface SettingInfo {
  /** Environment variable / app setting name. */
  readonly name: string;
  /** Parsed value when the setting is unset, or `undefined` when it has no default (optional). */
  readonly defaultValue: unknown;
  /** True when the app cannot start without it. */
  readonly required: boolean;
  /** Parses a raw value as the app would; throws on an invalid one. */
  readonly parse: (raw: string) => unknown;
  /** What the setting does (its `.describe()` text; docs/configuration.md is generated from it). */
  readonly description: string | undefined;
  /** The setting's zod schema (the generated page reads the accepted values from it). */
  readonly schema: z.ZodType;
}

/**
 * Every setting the app reads from the environment, in schema order, with its default. Read by the
 * infrastructure contract test (test/infra) so Bicep and the local settings samples follow the code, and by
 * `npm run docs`, which generates docs/configuration.md from it.
 */
export function configSettings(): readonly SettingInfo[] {
  return Object.entries(envShape.shape).map(([name, schema]: [string, z.ZodType]) => {
    const unset = schema.safeParse(undefined);
    return {
      name,
      defaultValue: unset.success ? unset.data : undefined,
      required: !unset.success,
      parse: (raw: string) => schema.parse(raw),
      description: schema.description,
      schema,
    };
  });
}
