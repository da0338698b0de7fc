/**
 * The decisioning's settings (part of {@link envSchema} in `env-schema.ts`): the ruleset and the signals document
 * served, their folders and containers, and the list cache.
 */
import { z } from 'zod';
import { bool, emptyToUndefined, int } from './zod-helpers';

/** The environment variables of rulesets, signals and lists (merged into the config's schema). */
export const decisioningEnv = {
  RULESET_NAME: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^([A-Za-z][A-Za-z0-9_.-]{0,63}|none)$/, { error: 'must be a ruleset name like fraud-rules, or none' })
        .default('fraud-rules'),
    )
    .describe(
      "The ruleset served: `{name}` of `rulesets/{name}/{version}.json`; `none` = no rules, the model's thresholds decide.",
    ),
  RULESET_DIR: z
    .preprocess(emptyToUndefined, z.string().max(1024).default('rulesets'))
    .describe('Folder of the shipped rulesets (`{name}/{version}.json`), relative to the app root.'),
  RULESETS_CONTAINER: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
        .default('models'),
    )
    .describe('Blob container of ruleset uploads (`rulesets/{name}/{version}.json`); default the models container.'),
  SIGNALS_NAME: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z][a-z0-9-]{0,63}$/, { error: 'must be a signals name like default' })
        .default('default'),
    )
    .describe(
      'The signals document served: `{name}` of `features/{name}/{version}.json` (uploads) and `signals/{name}/{version}.json` (shipped: one must compile, else the start fails).',
    ),
  SIGNALS_DIR: z
    .preprocess(emptyToUndefined, z.string().max(1024).default('signals'))
    .describe(
      'Folder of the shipped signals versions (`{name}/{version}.json`; the highest that compiles serves without a pointer), relative to the app root.',
    ),
  SIGNALS_CONTAINER: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[a-z0-9](?!.*--)[a-z0-9-]{1,61}[a-z0-9]$/, { error: 'must be a blob container name like models' })
        .default('models'),
    )
    .describe('Blob container of signals uploads (`features/{name}/{version}.json`); default the models container.'),
  SIGNALS_ONE_SCRIPT: bool(false).describe(
    "Whether one payment's aggregates of every key go in one Redis script call (`true`: only on a single, non-clustered Redis; fewest commands) or one call per key, sent together (`false`: a clustered Redis, such as Azure Managed Redis, where keys of different entities live on different shards); docs/signals.md.",
  ),
  SIGNALS_MAX_ENTITIES: int(1, 100_000_000, 100_000).describe(
    'Most keys (users, cards, devices, IP addresses, emails, …) whose aggregates the in-process store keeps without Redis (least recently used dropped).',
  ),
  RULESET_DIRECT_ROLLOUT: bool(true).describe(
    'Whether a ruleset uploaded to blob rolls out directly (`true`, embedded defaults: teams without the console) or becomes a draft that another lead approves first (`false`, the Azure deployment); see docs/governance.md.',
  ),
  LIST_L1_TTL_SEC: int(1, 3600, 10).describe(
    'Time to live of a list membership in the in-process cache, s; a list change invalidates it at once on every instance.',
  ),
  LIST_L1_MAX_ENTRIES: int(1, 10_000_000, 100_000).describe('Most list memberships held in the in-process cache.'),
};
