import type { PaymentEvent } from '../domain/payment-event';
import type { ResultReviewer, ScoreResult } from '../scoring/scorer';
import type { EscalationBreaker } from './breaker';
import type { VerdictClient } from './client';
import { combineDecisions } from './combine';
import { classifyFailure, EscalationFailure } from './failure';
import type { EscalationPolicy } from './policy';
import { buildPrompt } from './prompt';
import type { EscalationInfo, EscalationTrigger } from '../scoring/escalation-info';
import type { EscalationEvents } from './types';
import { verdictDecision } from './verdict';
import { noopTracer, type StageTracer } from '../platform/stage-tracer';

/** Dependencies of an {@link Escalator}. */
export interface EscalatorDeps {
  readonly policy: EscalationPolicy;
  readonly breaker: EscalationBreaker;
  readonly client: VerdictClient;
  /** Deployment name (the `model` of a block when no response names one). */
  readonly deployment: string;
  /** Budget of one escalation, ms. */
  readonly timeoutMs: number;
  /** Escalations in flight at once; more fall back at once. */
  readonly maxInFlight: number;
  readonly pricePer1k: { readonly prompt: number; readonly completion: number };
  /** HMAC key of the user hash in the prompt (it may need a Key Vault read; a failure fails the escalation). */
  readonly userHashKey: () => Promise<Buffer | string>;
  /** The note is cut to this many characters in the prompt. */
  readonly noteMaxChars: number;
  readonly on?: Partial<EscalationEvents>;
  /** Monotonic clock, ms (latency). Default `performance.now`. */
  readonly now?: () => number;
  /** Stage spans: each escalation sent or skipped runs in an `escalation` span. Default none. */
  readonly tracer?: StageTracer;
}

/**
 * The step after local scoring: asks the policy whether a payment escalates; if so, sends a minimal prompt
 * to the LLM through the breaker within the time budget and combines the verdict with the local decision
 * (the stricter wins). Any failure keeps the local result (`source: "local-fallback"`). A payment that does
 * not escalate returns at once, untouched.
 */
export class Escalator implements ResultReviewer {
  private readonly now: () => number;
  private inFlight = 0;

  constructor(private readonly deps: EscalatorDeps) {
    this.now = deps.now ?? (() => performance.now());
  }

  /** Reviews one locally scored payment; never throws. */
  async review(event: PaymentEvent, local: ScoreResult): Promise<ScoreResult> {
    const policy = this.deps.policy.decide(event, local);
    if (policy.triggers.length === 0) return local;
    if (!policy.escalate)
      return this.finish(
        local,
        policy.triggers,
        'local',
        failureBlock('capped', 'the escalation share cap is reached'),
      );
    const tracer = this.deps.tracer ?? noopTracer;
    if (!tracer.enabled) return this.escalate(event, local, policy.triggers);
    const attrs = {
      'gen_ai.operation.name': 'chat',
      'gen_ai.provider.name': 'azure.ai.openai',
      'gen_ai.request.model': this.deps.deployment,
    };
    return tracer.span('escalation', attrs, async (span) => {
      const r = await this.escalate(event, local, policy.triggers);
      const e = r.escalation;
      span.setAttributes({
        'llm.outcome': e?.outcome,
        'breaker.state': this.deps.breaker.state,
        'gen_ai.usage.input_tokens': e?.tokens.prompt,
        'gen_ai.usage.output_tokens': e?.tokens.completion,
      });
      return r;
    });
  }

  private async escalate(
    event: PaymentEvent,
    local: ScoreResult,
    triggers: readonly EscalationTrigger[],
  ): Promise<ScoreResult> {
    if (!this.deps.breaker.admits())
      return this.fallback(
        local,
        triggers,
        new EscalationFailure('breaker_open', `the circuit breaker is ${this.deps.breaker.state}`),
        0,
      );
    if (this.inFlight >= this.deps.maxInFlight)
      return this.fallback(local, triggers, new EscalationFailure('busy', 'too many escalations in flight'), 0);
    const started = this.now();
    this.inFlight++;
    const budget = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      budget.abort(new Error('escalation budget expired'));
    }, this.deps.timeoutMs);
    const expired = new Promise<never>((_, reject) =>
      budget.signal.addEventListener(
        'abort',
        () => reject(new EscalationFailure('timeout', 'the escalation budget expired')),
        { once: true },
      ),
    );
    expired.catch(() => undefined);
    try {
      const call = this.deps.breaker.execute(async () => {
        try {
          const userHashKey = await this.deps.userHashKey();
          const messages = buildPrompt(event, local, { userHashKey, noteMaxChars: this.deps.noteMaxChars });
          return await this.deps.client.assess(messages, budget.signal);
        } catch (err) {
          throw classifyFailure(err, timedOut);
        }
      });
      call.catch(() => undefined); // it may lose the race to the budget; the breaker still sees its outcome
      const a = await Promise.race([call, expired]);
      const latencyMs = this.now() - started;
      const llmDecision = verdictDecision(a.verdict);
      const block: Omit<EscalationInfo, 'triggers' | 'localDecision'> = {
        model: a.model,
        outcome: 'ok',
        latencyMs: round1(latencyMs),
        tokens: a.tokens,
        costUsd: this.cost(a.tokens),
        llm: { ...a.verdict, decision: llmDecision },
      };
      const combined = { ...local, decision: combineDecisions(local.decision, llmDecision) };
      return this.finish(combined, triggers, 'openai', block, local);
    } catch (err) {
      const f = err instanceof EscalationFailure ? err : classifyFailure(err, timedOut);
      const sent = f.outcome !== 'breaker_open' && f.outcome !== 'busy';
      return this.fallback(local, triggers, f, sent ? this.now() - started : 0);
    } finally {
      clearTimeout(timer);
      this.inFlight--;
    }
  }

  private fallback(
    local: ScoreResult,
    triggers: readonly EscalationTrigger[],
    f: EscalationFailure,
    latencyMs: number,
  ): ScoreResult {
    const tokens = f.extra.tokens ?? { prompt: 0, completion: 0 };
    const block = {
      ...failureBlock(f.outcome, f.message),
      model: f.extra.model ?? this.deps.deployment,
      latencyMs: round1(latencyMs),
      tokens,
      costUsd: this.cost(tokens),
    };
    return this.finish(local, triggers, 'local-fallback', block);
  }

  private finish(
    result: ScoreResult,
    triggers: readonly EscalationTrigger[],
    source: ScoreResult['source'],
    block: Omit<EscalationInfo, 'triggers' | 'localDecision'>,
    local: ScoreResult = result,
  ): ScoreResult {
    const model = block.model === '' ? this.deps.deployment : block.model;
    const escalation: EscalationInfo = { ...block, model, triggers, localDecision: local.decision };
    this.deps.on?.escalated?.({
      outcome: escalation.outcome,
      triggers,
      latencyMs: escalation.latencyMs,
      promptTokens: escalation.tokens.prompt,
      completionTokens: escalation.tokens.completion,
      costUsd: escalation.costUsd,
      model,
      ...(escalation.reason === undefined ? {} : { reason: escalation.reason }),
    });
    return { ...result, source, escalation };
  }

  private cost(t: { readonly prompt: number; readonly completion: number }): number {
    const usd =
      (t.prompt / 1000) * this.deps.pricePer1k.prompt + (t.completion / 1000) * this.deps.pricePer1k.completion;
    return Math.round(usd * 1e8) / 1e8;
  }
}

function failureBlock(
  outcome: EscalationInfo['outcome'],
  reason: string,
): Omit<EscalationInfo, 'triggers' | 'localDecision'> {
  return { model: '', outcome, latencyMs: 0, reason, tokens: { prompt: 0, completion: 0 }, costUsd: 0 };
}

const round1 = (ms: number): number => Math.round(ms * 10) / 10;
