import { z } from 'zod';
import type { FieldError } from '../errors/errors';
import { emptyToUndefined, int, num, optStr } from './zod-helpers';

/** LLM escalation settings (see {@link Config.escalation}). */
export const escalationEnv = {
  AZURE_OPENAI_ENDPOINT: z
    .preprocess(emptyToUndefined, z.url({ error: 'must be a URL like https://myresource.openai.azure.com' }).optional())
    .describe(
      'Azure OpenAI endpoint; with `AZURE_OPENAI_DEPLOYMENT` turns LLM escalation on (one without the other fails at start-up).',
    ),
  AZURE_OPENAI_DEPLOYMENT: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/, { error: 'must be a deployment name like gpt-4o-mini' })
        .optional(),
    )
    .describe('Chat deployment used for escalation (must support `json_schema` structured outputs).'),
  OPENAI_API_VERSION: z
    .preprocess(
      emptyToUndefined,
      z
        .string()
        .regex(/^\d{4}-\d{2}-\d{2}(-preview)?$/, { error: 'must be an API version like 2024-10-21' })
        .refine((v) => v.slice(0, 10) >= '2024-08-01', {
          error: 'must be 2024-08-01-preview or later (json_schema structured outputs)',
        })
        .default('2024-10-21'),
    )
    .describe('Azure OpenAI API version; versions before `2024-08-01-preview` are refused.'),
  AZURE_OPENAI_KEY_SECRET_NAME: optStr.describe(
    'Key Vault secret holding an Azure OpenAI API key (needs `KEY_VAULT_URL`); used when Entra ID is not.',
  ),
  AZURE_OPENAI_API_KEY: optStr.describe('Azure OpenAI API key for local use.'),
  ESCALATION_NOTE_MIN_CHARS: int(1, 4000, 200).describe('A payment `note` at least this long escalates.'),
  ESCALATION_NOTE_MAX_CHARS: int(0, 4000, 1000).describe('The `note` is cut to this many characters in the prompt.'),
  ESCALATION_MAX_SHARE: num(0, 1, 0.05).describe('Largest share of payments escalated over the sliding window.'),
  ESCALATION_WINDOW_SEC: int(1, 3600, 60).describe('Sliding window of the escalation share cap, s.'),
  ESCALATION_BURST: int(0, 1000, 1).describe('Escalations allowed in a window regardless of the share.'),
  ESCALATION_BAND_LOW: z
    .preprocess(emptyToUndefined, z.coerce.number({ error: 'must be a number' }).min(0).max(1).optional())
    .describe("Lower bound of a fixed uncertainty band; unset = the manifest's review threshold."),
  ESCALATION_BAND_HIGH: z
    .preprocess(emptyToUndefined, z.coerce.number({ error: 'must be a number' }).min(0).max(1).optional())
    .describe("Upper bound of a fixed uncertainty band; unset = the manifest's decline threshold."),
  ESCALATION_TIMEOUT_MS: int(50, 60_000, 1500).describe('Time budget of one escalation, ms.'),
  ESCALATION_BREAKER_COOLDOWN_MS: int(100, 3_600_000, 30_000).describe(
    'Least time the escalation circuit breaker stays open, ms.',
  ),
  ESCALATION_MAX_IN_FLIGHT: int(1, 1000, 16).describe(
    'Escalations in flight at once per instance; more fall back as `busy`.',
  ),
  ESCALATION_PRICE_PROMPT_PER_1K_USD: num(0, 1000, 0.00015).describe(
    'Prompt price per 1 000 tokens, USD (cost estimate only).',
  ),
  ESCALATION_PRICE_COMPLETION_PER_1K_USD: num(0, 1000, 0.0006).describe(
    'Completion price per 1 000 tokens, USD (cost estimate only).',
  ),
  ESCALATION_USER_HASH_KEY: z
    .preprocess(emptyToUndefined, z.string().min(32, { error: 'must be at least 32 characters' }).optional())
    .describe('HMAC key (≥ 32 characters) of the user hash sent in prompts; a secret.'),
  ESCALATION_USER_HASH_KEY_SECRET_NAME: optStr.describe(
    'Key Vault secret holding the user-hash key; with neither, a random key per process.',
  ),
};

/** The parsed escalation settings, plus the two shared settings the slice depends on. */
export type EscalationEnv = z.infer<z.ZodObject<typeof escalationEnv>> & {
  readonly KEY_VAULT_URL?: string | undefined;
  readonly AZURE_CLIENT_ID?: string | undefined;
};

/** Settings of the LLM escalation (on when `AZURE_OPENAI_ENDPOINT` and `AZURE_OPENAI_DEPLOYMENT` are set). */
export interface EscalationSettings {
  readonly endpoint: string;
  readonly deployment: string;
  /** Azure OpenAI API version (default `2024-10-21`, GA with `json_schema` structured outputs). */
  readonly apiVersion: string;
  /**
   * How the client authenticates, in order: Entra when `AZURE_CLIENT_ID` is set or no key is configured;
   * else the key in Key Vault (`KEY_VAULT_URL` + `AZURE_OPENAI_KEY_SECRET_NAME`); else `AZURE_OPENAI_API_KEY`.
   */
  readonly auth:
    | { readonly mode: 'entra'; readonly managedIdentityClientId: string | undefined }
    | { readonly mode: 'keyvault'; readonly vaultUrl: string; readonly secretName: string }
    | { readonly mode: 'key'; readonly apiKey: string };
  /** A `note` of at least this many characters escalates (default 200). */
  readonly noteMinChars: number;
  /** The note is cut to this many characters in the prompt (default 1000). */
  readonly noteMaxChars: number;
  /** Largest share of payments escalated over the sliding window (default 0.05). */
  readonly maxShare: number;
  /** Sliding window of the share cap, ms (default 60 000). */
  readonly windowMs: number;
  /** Escalations always allowed in a window even below the share (default 1: a quiet instance can still escalate). */
  readonly burst: number;
  /** Uncertainty band `[low, high)` of the local score; undefined = the manifest's `[review, decline)` thresholds. */
  readonly band: { readonly low: number; readonly high: number } | undefined;
  /** Budget of one escalation, ms, enforced by one abort signal (default 1500). */
  readonly timeoutMs: number;
  /** Least time the breaker stays open, ms (default 30 000); a longer Retry-After (capped at 5 min) wins. */
  readonly breakerCooldownMs: number;
  /** Escalations in flight at once; more fall back to the local result (default 16). */
  readonly maxInFlight: number;
  /** Prices per 1k tokens, USD (defaults 0.00015 prompt, 0.0006 completion). */
  readonly pricePer1k: { readonly prompt: number; readonly completion: number };
  /** HMAC key of the user hash: the setting, else Key Vault secret, else a random key per process. */
  readonly userHashKey:
    | { readonly mode: 'setting'; readonly key: string }
    | { readonly mode: 'keyvault'; readonly vaultUrl: string; readonly secretName: string }
    | { readonly mode: 'random' };
}

/** The escalation slice, or the errors naming the settings that are inconsistent. */
export function escalationSettings(e: EscalationEnv): { value: EscalationSettings | undefined; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const need = (name: string, message: string): void => void errors.push({ path: name, message });
  if (e.AZURE_OPENAI_ENDPOINT === undefined && e.AZURE_OPENAI_DEPLOYMENT === undefined)
    return { value: undefined, errors };
  if (e.AZURE_OPENAI_ENDPOINT === undefined) need('AZURE_OPENAI_ENDPOINT', 'is required with AZURE_OPENAI_DEPLOYMENT');
  if (e.AZURE_OPENAI_DEPLOYMENT === undefined)
    need('AZURE_OPENAI_DEPLOYMENT', 'is required with AZURE_OPENAI_ENDPOINT');
  if (e.AZURE_OPENAI_KEY_SECRET_NAME !== undefined && e.KEY_VAULT_URL === undefined)
    need('KEY_VAULT_URL', 'is required with AZURE_OPENAI_KEY_SECRET_NAME');
  if (e.ESCALATION_USER_HASH_KEY_SECRET_NAME !== undefined && e.KEY_VAULT_URL === undefined)
    need('KEY_VAULT_URL', 'is required with ESCALATION_USER_HASH_KEY_SECRET_NAME');
  if ((e.ESCALATION_BAND_LOW === undefined) !== (e.ESCALATION_BAND_HIGH === undefined))
    need(
      e.ESCALATION_BAND_LOW === undefined ? 'ESCALATION_BAND_LOW' : 'ESCALATION_BAND_HIGH',
      'is required with the other band bound',
    );
  else if (
    e.ESCALATION_BAND_LOW !== undefined &&
    e.ESCALATION_BAND_HIGH !== undefined &&
    e.ESCALATION_BAND_LOW >= e.ESCALATION_BAND_HIGH
  )
    need('ESCALATION_BAND_HIGH', 'must be greater than ESCALATION_BAND_LOW');
  if (errors.length > 0) return { value: undefined, errors };
  const vault = e.KEY_VAULT_URL as string;
  const auth: EscalationSettings['auth'] =
    e.AZURE_CLIENT_ID !== undefined ||
    (e.AZURE_OPENAI_KEY_SECRET_NAME === undefined && e.AZURE_OPENAI_API_KEY === undefined)
      ? { mode: 'entra', managedIdentityClientId: e.AZURE_CLIENT_ID }
      : e.AZURE_OPENAI_KEY_SECRET_NAME !== undefined
        ? { mode: 'keyvault', vaultUrl: vault, secretName: e.AZURE_OPENAI_KEY_SECRET_NAME }
        : { mode: 'key', apiKey: e.AZURE_OPENAI_API_KEY as string };
  const value: EscalationSettings = {
    endpoint: e.AZURE_OPENAI_ENDPOINT as string,
    deployment: e.AZURE_OPENAI_DEPLOYMENT as string,
    apiVersion: e.OPENAI_API_VERSION,
    auth,
    noteMinChars: e.ESCALATION_NOTE_MIN_CHARS,
    noteMaxChars: e.ESCALATION_NOTE_MAX_CHARS,
    maxShare: e.ESCALATION_MAX_SHARE,
    windowMs: e.ESCALATION_WINDOW_SEC * 1000,
    burst: e.ESCALATION_BURST,
    band:
      e.ESCALATION_BAND_LOW === undefined || e.ESCALATION_BAND_HIGH === undefined
        ? undefined
        : { low: e.ESCALATION_BAND_LOW, high: e.ESCALATION_BAND_HIGH },
    timeoutMs: e.ESCALATION_TIMEOUT_MS,
    breakerCooldownMs: e.ESCALATION_BREAKER_COOLDOWN_MS,
    maxInFlight: e.ESCALATION_MAX_IN_FLIGHT,
    pricePer1k: { prompt: e.ESCALATION_PRICE_PROMPT_PER_1K_USD, completion: e.ESCALATION_PRICE_COMPLETION_PER_1K_USD },
    userHashKey:
      e.ESCALATION_USER_HASH_KEY !== undefined
        ? { mode: 'setting', key: e.ESCALATION_USER_HASH_KEY }
        : e.ESCALATION_USER_HASH_KEY_SECRET_NAME !== undefined
          ? { mode: 'keyvault', vaultUrl: vault, secretName: e.ESCALATION_USER_HASH_KEY_SECRET_NAME }
          : { mode: 'random' },
  };
  return { value, errors };
}
