import { randomBytes } from 'node:crypto';
import type { TokenCredential } from '@azure/identity';
import { SecretClient, type SecretClientOptions } from '@azure/keyvault-secrets';
import type { AzureOpenAI } from 'openai';
import type { EscalationSettings } from '../config/escalation-settings';
import type { SecretReader } from '../platform/redis/connection';
import type { StageTracer } from '../platform/stage-tracer';
import type { Logger } from '../platform/logger';
import { EscalationBreaker } from './breaker';
import { AzureVerdictClient, createAzureOpenAI, entraTokenProvider, type VerdictClient } from './client';
import { Escalator } from './escalator';
import { EscalationFailure } from './failure';
import { EscalationPolicy } from './policy';
import type { EscalationEvents } from './types';
import { azureCredential } from '../platform/credential';

/** Dependencies of {@link createEscalator}; every one has a production default. */
export interface EscalatorWiring {
  readonly logger: Logger;
  /** Credential for Entra auth and Key Vault; default `DefaultAzureCredential` (managed identity `AZURE_CLIENT_ID` if set). */
  readonly credential?: TokenCredential;
  /** Key Vault reader for the API key / hash key secrets; default a `SecretClient` on the configured vault. */
  readonly secretReader?: SecretReader;
  /** Options of the default `SecretClient` (tests: TLS trust of a local vault, retries). */
  readonly secretClientOptions?: SecretClientOptions;
  /** fetch of the SDK client (tests); default the global one. */
  readonly fetch?: typeof fetch;
  /** Replaces the verdict client altogether (tests, benchmarks). */
  readonly client?: VerdictClient;
  readonly on?: Partial<EscalationEvents>;
  /** Monotonic clock, ms (share-cap window, latency). */
  readonly now?: () => number;
  /** Stage spans (the `escalation` span); default none. */
  readonly tracer?: StageTracer;
}

/** Reads one secret from Key Vault; the error names the secret, never a value. */
async function readSecret(reader: SecretReader, name: string): Promise<string> {
  let value: string | undefined;
  try {
    value = (await reader.getSecret(name)).value;
  } catch {
    throw new EscalationFailure('error', `Key Vault secret "${name}" could not be read`);
  }
  if (value === undefined || value.trim() === '')
    throw new EscalationFailure('error', `Key Vault secret "${name}" is empty`);
  return value.trim();
}

/** Caches a successful async result; a failure is not cached (the next call tries again). */
function lazy<T>(make: () => Promise<T>): () => Promise<T> {
  let p: Promise<T> | undefined;
  return () => {
    p ??= make().catch((err: unknown) => {
      p = undefined;
      throw err;
    });
    return p;
  };
}

/**
 * Builds the escalator from its settings: policy (share cap), breaker, prompt key, and the Azure OpenAI
 * client with auth in order Entra → Key Vault key → `AZURE_OPENAI_API_KEY` (see {@link EscalationSettings.auth}).
 * Does no I/O: Key Vault is read on the first escalation (a failure there is an escalation failure, so the
 * breaker bounds the retries).
 */
export function createEscalator(s: EscalationSettings, w: EscalatorWiring): Escalator {
  let credential = w.credential;
  const getCredential = (): TokenCredential =>
    (credential ??= azureCredential(s.auth.mode === 'entra' ? s.auth.managedIdentityClientId : undefined));
  const readers = new Map<string, SecretReader>();
  const reader = (vaultUrl: string): SecretReader => {
    if (w.secretReader !== undefined) return w.secretReader;
    let r = readers.get(vaultUrl);
    if (r === undefined)
      readers.set(vaultUrl, (r = new SecretClient(vaultUrl, getCredential(), w.secretClientOptions)));
    return r;
  };
  const auth = s.auth;
  const sdk = lazy(async (): Promise<AzureOpenAI> => {
    const common = {
      endpoint: s.endpoint,
      deployment: s.deployment,
      apiVersion: s.apiVersion,
      ...(w.fetch === undefined ? {} : { fetch: w.fetch }),
    };
    if (auth.mode === 'entra')
      return createAzureOpenAI({ ...common, auth: { tokenProvider: entraTokenProvider(getCredential()) } });
    const apiKey = auth.mode === 'key' ? auth.apiKey : await readSecret(reader(auth.vaultUrl), auth.secretName);
    return createAzureOpenAI({ ...common, auth: { apiKey } });
  });
  const hashKey = s.userHashKey;
  const userHashKey =
    hashKey.mode === 'setting'
      ? () => Promise.resolve(hashKey.key)
      : hashKey.mode === 'keyvault'
        ? lazy(() => readSecret(reader(hashKey.vaultUrl), hashKey.secretName))
        : (
            (key: Buffer) => () =>
              Promise.resolve(key)
          )(randomBytes(32));
  w.logger.info('llm escalation on', {
    deployment: s.deployment,
    apiVersion: s.apiVersion,
    auth: auth.mode,
    maxShare: s.maxShare,
    timeoutMs: s.timeoutMs,
  });
  return new Escalator({
    policy: new EscalationPolicy({
      noteMinChars: s.noteMinChars,
      band: s.band,
      maxShare: s.maxShare,
      windowMs: s.windowMs,
      burst: s.burst,
      ...(w.now === undefined ? {} : { now: w.now }),
    }),
    breaker: new EscalationBreaker({ cooldownMs: s.breakerCooldownMs, ...(w.on === undefined ? {} : { on: w.on }) }),
    client: w.client ?? new AzureVerdictClient(sdk, { deployment: s.deployment }),
    deployment: s.deployment,
    timeoutMs: s.timeoutMs,
    maxInFlight: s.maxInFlight,
    pricePer1k: s.pricePer1k,
    userHashKey,
    noteMaxChars: s.noteMaxChars,
    ...(w.on === undefined ? {} : { on: w.on }),
    ...(w.tracer === undefined ? {} : { tracer: w.tracer }),
    ...(w.now === undefined ? {} : { now: w.now }),
  });
}
