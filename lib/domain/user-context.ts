/** What the engine knows about a user when scoring one of their payments. */

/** Long-lived profile of a user (the origin of the context cache). */
export interface UserProfile {
  /** ISO 3166-1 alpha-2 country the user usually pays from. */
  readonly homeCountry: string;
  /** Typical payment amount, in currency units. */
  readonly usualAmount: number;
  /** Device ids seen on this account. */
  readonly knownDevices: readonly string[];
  /** When the account was opened (ISO 8601). */
  readonly accountCreatedAt: string;
}

/** Velocity of the user's recent payments, as counted before the current one. */
export interface Velocity {
  /** Payments in the last 60 s. */
  readonly count1m: number;
  /** Payments in the last hour. */
  readonly count1h: number;
  /** Payments in the last 24 h. */
  readonly count24h: number;
  /** Sum of amounts in the last 24 h, in currency units. */
  readonly sum24h: number;
  /** Distinct payment countries in the last 24 h. */
  readonly distinctCountries24h: number;
}

/** The context a payment is scored with. `profile` is `null` for a user with no history. */
export interface UserContext {
  readonly profile: UserProfile | null;
  readonly velocity: Velocity;
}

/** Velocity of a user with no recorded payments. */
export const EMPTY_VELOCITY: Velocity = Object.freeze({
  count1m: 0,
  count1h: 0,
  count24h: 0,
  sum24h: 0,
  distinctCountries24h: 0,
});

/** The context of a user with no history: no profile, no velocity. See the featurizer for the defaults this implies. */
export const NO_HISTORY: UserContext = Object.freeze({ profile: null, velocity: EMPTY_VELOCITY });
