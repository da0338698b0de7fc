/** Production defaults of the composition root that are not subsystems: server info, escalation, case handlers. */
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import type { CasesDeps } from '../cases/create-cases';
import { appRoot } from '../config/app-root';
import type { Config } from '../config/config';
import { escalationLogEvents } from '../escalation/escalation-log-events';
import type { EscalationEvents } from '../escalation/types';
import { combineHandlers } from '../platform/combine-handlers';
import type { Logger } from '../platform/logger';
import type { ResultReviewer } from '../scoring/scorer';
import type { Telemetry } from '../telemetry/telemetry';
import type { EngineDeps } from './parts';

/** This server's name and version (`package.json`), as the inference protocol's server metadata reports them. */
export function serverInfo(): { readonly name: string; readonly version: string } {
  const pkg = JSON.parse(readFileSync(path.join(appRoot(), 'package.json'), 'utf8')) as Record<string, unknown>;
  return { name: String(pkg['name']), version: String(pkg['version']) };
}

/**
 * The LLM escalation, when configured. Its module loads only then: the OpenAI SDK, Azure identity and Key Vault
 * clients cost start-up time.
 */
export async function createEscalation(
  config: Config,
  deps: EngineDeps,
  logger: Logger,
  telemetry: Telemetry,
): Promise<ResultReviewer | undefined> {
  if (config.escalation === undefined) return undefined;
  const { createEscalator } = await import('../escalation/create-escalator');
  return createEscalator(config.escalation, {
    logger,
    tracer: telemetry.tracer,
    ...deps.escalation,
    on: combineHandlers<EscalationEvents>(
      escalationLogEvents(logger),
      telemetry.escalationEvents(),
      deps.escalation?.on,
    ),
  });
}

/** Telemetry's handlers of the case queue's events, with a caller's extra ones. */
export function caseHandlers(telemetry: Telemetry, extra: CasesDeps['on']): NonNullable<CasesDeps['on']> {
  const t = telemetry.caseEvents();
  return {
    writer: combineHandlers(t.writer, extra?.writer),
    intake: combineHandlers(t.intake, extra?.intake),
    sweep: combineHandlers(t.sweep, extra?.sweep),
    outbox: combineHandlers(t.outbox, extra?.outbox),
    verdict: (e) => {
      t.verdict(e);
      extra?.verdict?.(e);
    },
  };
}

/** Decisions the console's rules and drift pages read per window at most (newest first). */
export const INSIGHTS_MAX_RECORDS = 200_000;
/** How long the console's rules and drift figures are kept before they are read again. */
export const INSIGHTS_TTL_MS = 60_000;
