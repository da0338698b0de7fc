import { getBearerTokenProvider, type TokenCredential } from '@azure/identity';
import { AzureOpenAI } from 'openai';
import type { EscalationSettings } from '../config/escalation-settings';
import { EscalationFailure } from './failure';
import type { PromptMessage } from './prompt';
import type { LlmVerdict } from '../scoring/escalation-info';
import { normalizeVerdict, verdictFormat } from './verdict';

/** Scope of Azure OpenAI (Cognitive Services) tokens. */
export const COGNITIVE_SERVICES_SCOPE = 'https://cognitiveservices.azure.com/.default';

/** What one successful call returned. */
export interface Assessment {
  readonly verdict: LlmVerdict;
  /** The answering model (`model` of the response). */
  readonly model: string;
  readonly tokens: { readonly prompt: number; readonly completion: number };
}

/** Asks an LLM for a verdict. Throws {@link EscalationFailure} (or whatever the SDK threw) on any failure. */
export interface VerdictClient {
  assess(messages: readonly PromptMessage[], signal: AbortSignal): Promise<Assessment>;
}

/** How the Azure OpenAI client authenticates: never both a key and a token provider. */
export type OpenAiAuth = { readonly apiKey: string } | { readonly tokenProvider: () => Promise<string> };

/** Options of {@link createAzureOpenAI}. */
export interface AzureOpenAiOptions {
  readonly endpoint: string;
  readonly deployment: string;
  readonly apiVersion: string;
  readonly auth: OpenAiAuth;
  /** fetch to use (tests); default the global one. */
  readonly fetch?: typeof fetch;
}

/**
 * Builds the SDK client: `maxRetries: 0` (its retries honour an uncapped Retry-After and sleep through an
 * abort) and no own timeout (it stops at the headers; the caller's abort signal is the budget). Settings
 * are passed explicitly and `null` blocks the SDK's environment defaults, so a stray `AZURE_OPENAI_API_KEY`
 * or `OPENAI_BASE_URL` can never be combined with a token provider (the constructor throws on both).
 */
export function createAzureOpenAI(o: AzureOpenAiOptions): AzureOpenAI {
  // `null` (not undefined) stops the constructor's `= readEnv(...)` defaults; the types only say string | undefined.
  const none = null as unknown as undefined;
  return new AzureOpenAI({
    endpoint: o.endpoint,
    deployment: o.deployment,
    apiVersion: o.apiVersion,
    baseURL: null,
    organization: null,
    project: null,
    ...('apiKey' in o.auth ? { apiKey: o.auth.apiKey } : { apiKey: none, azureADTokenProvider: o.auth.tokenProvider }),
    maxRetries: 0,
    logLevel: 'off',
    ...(o.fetch === undefined ? {} : { fetch: o.fetch }),
  });
}

/** Entra token provider for Azure OpenAI from a credential (DefaultAzureCredential or the managed identity). */
export function entraTokenProvider(credential: TokenCredential): () => Promise<string> {
  return getBearerTokenProvider(credential, COGNITIVE_SERVICES_SCOPE);
}

/**
 * {@link VerdictClient} over Azure OpenAI chat completions with structured outputs
 * (`chat.completions.parse` + `zodResponseFormat`). A refusal, an empty message, a `length` or
 * `content_filter` finish, invalid JSON or a schema violation each throw.
 */
export class AzureVerdictClient implements VerdictClient {
  /**
   * @param client the SDK client, or a getter for one that may need I/O first (a Key Vault read).
   * @param settings deployment name (the `model` field) and the completion token limit.
   */
  constructor(
    private readonly client: () => Promise<AzureOpenAI>,
    private readonly settings: Pick<EscalationSettings, 'deployment'> & { readonly maxCompletionTokens?: number },
  ) {}

  async assess(messages: readonly PromptMessage[], signal: AbortSignal): Promise<Assessment> {
    const client = await this.client();
    const completion = await client.chat.completions.parse(
      {
        model: this.settings.deployment,
        messages: messages.map((m) => ({ role: m.role, content: m.content })),
        response_format: verdictFormat,
        temperature: 0,
        max_tokens: this.settings.maxCompletionTokens ?? 300,
      },
      { signal, maxRetries: 0 },
    );
    const tokens = {
      prompt: completion.usage?.prompt_tokens ?? 0,
      completion: completion.usage?.completion_tokens ?? 0,
    };
    const model =
      typeof completion.model === 'string' && completion.model !== '' ? completion.model : this.settings.deployment;
    const message = completion.choices[0]?.message;
    if (message === undefined)
      throw new EscalationFailure('invalid_output', 'the answer has no choice', { tokens, model });
    if (typeof message.refusal === 'string' && message.refusal !== '')
      throw new EscalationFailure('refused', 'the model refused', { tokens, model });
    if (message.parsed === null || message.parsed === undefined)
      throw new EscalationFailure('invalid_output', 'the answer is empty', { tokens, model });
    return { verdict: normalizeVerdict(message.parsed), model, tokens };
  }
}
