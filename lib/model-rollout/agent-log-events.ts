/** The log lines of the fleet agent's events (model rollout). */
import type { Logger } from '../platform/logger';
import type { FleetAgentEvents } from './fleet-agent';

/** The fleet agent's event handlers: a log line for each event, then the caller's handler. */
export function agentLogEvents(logger: Logger, extra: Partial<FleetAgentEvents> = {}): Partial<FleetAgentEvents> {
  return {
    swapped: (e) => (
      logger.info(e.role === 'active' ? 'model version swapped' : 'candidate version loaded', {
        model: e.name,
        from: e.from,
        to: e.to,
        generation: e.generation,
      }),
      extra.swapped?.(e)
    ),
    stale: (e) => (
      logger.warn(`could not load the ${e.role} version the fleet pointer names; serving the current one`, {
        model: e.name,
        desired: e.desired,
        reason: e.reason,
      }),
      extra.stale?.(e)
    ),
    storeError: (e) => (
      e.stage === 'read'
        ? logger.warn('fleet store unavailable; retrying at the next reconcile', e)
        : logger.debug('fleet store call failed', e),
      extra.storeError?.(e)
    ),
  };
}
