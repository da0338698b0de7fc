/**
 * The signals kind's pointer state and transitions: those of every version-swapping kind
 * (`lib/rollout/version-traffic.ts`) with its own salts, so that the signals canary is independent of the model's
 * and the ruleset's; admin bodies with signals versions (`1.1.0`). Pure.
 * @module
 */
import { AdminBodies } from '../rollout/admin-bodies';
import { parseVersionState, VersionTraffic, type VersionState } from '../rollout/version-traffic';
import { SIGNALS_VERSION_RE } from './signals-document';

/** The signals pointer state (active, previous, candidate and its shares). */
export type SignalsState = VersionState;

/** The state before anything was published. */
export const EMPTY_SIGNALS_STATE: SignalsState = { generation: 0, active: undefined, previous: [], traffic: undefined };

/** A stored state's JSON text → the state. */
export const parseSignalsState = parseVersionState;

/** Salt of the signals canary share (users). */
export const SIGNALS_CANARY_SALT = 'signals-canary';
/** Salt of the signals shadow share (transactions). */
export const SIGNALS_SHADOW_SALT = 'signals-shadow';

/** The signals kind's transitions and shares. */
export const SIGNALS_TRAFFIC = new VersionTraffic('signals', SIGNALS_CANARY_SALT, SIGNALS_SHADOW_SALT, 'signals');

/** The admin bodies of signals (versions like `1.1.0`). */
export const SIGNALS_BODIES = new AdminBodies(SIGNALS_VERSION_RE, '1.1.0');
