import { testConfig } from '../../support/config';
import type { EscalationSettings } from '../../../lib/config/escalation-settings';
import { createEscalator, type EscalatorWiring } from '../../../lib/escalation/create-escalator';
import type { Escalator } from '../../../lib/escalation/escalator';
import type { EscalationEvents } from '../../../lib/escalation/types';
import { parsePaymentEvent, type PaymentEvent } from '../../../lib/domain/payment-event';
import type { ScoreResult } from '../../../lib/scoring/scorer';
import { silentLogger } from '../../../lib/platform/logger';
import type { FakeOpenAI } from '../../support/openai-peer';
import { validEvent } from '../../support/events';

/** Escalation settings pointing at a stand-in, API-key auth; `env` overrides any setting. */
export function settingsFor(fake: FakeOpenAI, env: Record<string, string> = {}): EscalationSettings {
  const config = testConfig({
    AZURE_OPENAI_ENDPOINT: fake.endpoint,
    AZURE_OPENAI_DEPLOYMENT: 'gpt-4o-mini',
    AZURE_OPENAI_API_KEY: 'test-api-key',
    ESCALATION_MAX_SHARE: '1',
    ESCALATION_USER_HASH_KEY: 'k'.repeat(32),
    ...env,
  });
  if (config.escalation === undefined) throw new Error('escalation settings expected');
  return config.escalation;
}

/** Recorded escalation events. */
export interface Recorded {
  readonly escalated: Parameters<EscalationEvents['escalated']>[0][];
  readonly breaker: Parameters<EscalationEvents['breakerStateChanged']>[0][];
}

/** A real escalator (real AzureOpenAI client) against the stand-in, recording its events. */
export function escalatorFor(
  fake: FakeOpenAI,
  env: Record<string, string> = {},
  wiring: Partial<Omit<EscalatorWiring, 'logger' | 'on'>> = {},
): { escalator: Escalator; events: Recorded } {
  const events: Recorded = { escalated: [], breaker: [] };
  const escalator = createEscalator(settingsFor(fake, env), {
    logger: silentLogger,
    ...wiring,
    on: { escalated: (e) => events.escalated.push(e), breakerStateChanged: (e) => events.breaker.push(e) },
  });
  return { escalator, events };
}

/** A validated payment event; override any field. */
export function event(overrides: Record<string, unknown> = {}): PaymentEvent {
  return parsePaymentEvent(validEvent(overrides));
}

/** A local result as the scorer produces it (decision `approve` by default: no band trigger). */
export function localResult(overrides: Partial<ScoreResult> = {}): ScoreResult {
  return {
    transactionId: 'tx-0001',
    score: 0.12,
    decision: 'approve',
    reasons: [{ code: 'amount_log', contribution: 0.4, description: 'log of the amount' }],
    model: { name: 'fraud', version: '1.0.0' },
    source: 'local',
    cache: 'miss',
    timing: { queueMs: 0.1, inferenceMs: 0.2, batchSize: 1 },
    ...overrides,
  };
}

/** A payment that asks for deep analysis. */
export const deep = (overrides: Record<string, unknown> = {}): PaymentEvent =>
  event({ analysis: 'deep', ...overrides });
