import type { Logger } from '../platform/logger';
import type { EscalationEvents } from './types';

/** Log lines of the escalation: breaker changes, and failed escalations (outcome and fixed reason only). */
export function escalationLogEvents(logger: Logger): Partial<EscalationEvents> {
  return {
    breakerStateChanged: (e) => {
      const fields = { previous: e.previous, openForMs: e.openForMs };
      if (e.state === 'open') logger.warn('llm escalation breaker open', fields);
      else logger.info(`llm escalation breaker ${e.state}`, fields);
    },
    escalated: (e) => {
      if (e.outcome === 'ok' || e.outcome === 'capped') return;
      const fields = { outcome: e.outcome, reason: e.reason };
      // nothing was sent while open or busy: one line per payment would flood the log
      if (e.outcome === 'breaker_open' || e.outcome === 'busy') logger.debug('llm escalation skipped', fields);
      else logger.warn('llm escalation fell back to the local result', fields);
    },
  };
}
