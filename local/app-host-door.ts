/**
 * The door `npm start` (and the benchmark's service) put in front of this app's invocations: a
 * {@link HostDoor} with the engine's `ADMISSION_*` limits. See README "Admission".
 * @module
 */
import { sharedEngine } from '../lib/app';
import { HostDoor } from './host-door';

/** A {@link HostDoor} with the shared engine's admission settings (creates the shared engine). */
export async function appHostDoor(): Promise<HostDoor> {
  const { maxInflight, minInflight, intervalMs, holdMs, hostTargetMs } = (await sharedEngine()).config.admission;
  return new HostDoor({
    maxLimit: maxInflight,
    minLimit: minInflight,
    intervalMs,
    holdMs,
    ...(hostTargetMs > 0 ? { latencyTargetMs: hostTargetMs } : {}),
  });
}
