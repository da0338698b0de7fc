/**
 * Who is acting on the case API, by `IDENTITY_MODE`:
 * - `easyauth` (Azure with authentication configured): the `x-ms-client-principal` header. It is trusted only
 *   because Easy Auth removes any copy a client sends and sets its own; without Easy Auth in front, anyone could
 *   send one, so this mode must not be used there.
 * - `development` (`npm start`): the header when present (tests act as several people), else the default actor
 *   `DEV_ACTOR_NAME` with `DEV_ACTOR_ROLES`; every actor is marked `development`.
 * - `disabled` (the default): the case API refuses (403) and never reads the header.
 */
import { AppError } from '../errors/errors';
import { decodePrincipal, type Actor, type Role } from './principal';

/** The identity settings. */
export interface IdentitySettings {
  /** `IDENTITY_MODE`, default `disabled`. */
  readonly mode: 'easyauth' | 'development' | 'disabled';
  /** The default actor in development mode (`DEV_ACTOR_NAME`, `DEV_ACTOR_ROLES`). */
  readonly devActor: { readonly name: string; readonly roles: readonly Role[] };
}

/** The header Easy Auth sets. */
export const PRINCIPAL_HEADER = 'x-ms-client-principal';

/** Reads the actor of a request. */
export class Identity {
  constructor(private readonly s: IdentitySettings) {}

  /** The mode in force. */
  get mode(): IdentitySettings['mode'] {
    return this.s.mode;
  }

  /**
   * The actor of a request, from its headers.
   * @throws AppError `forbidden` when the mode is `disabled`; `unauthenticated` without a valid principal
   *   (`easyauth`), or with an invalid one (`development`).
   */
  actorOf(headers: { get(name: string): string | null }): Actor {
    if (this.s.mode === 'disabled')
      throw new AppError(
        'forbidden',
        'The case API is disabled: authentication is not configured (IDENTITY_MODE=disabled).',
      );
    const development = this.s.mode === 'development';
    const header = headers.get(PRINCIPAL_HEADER);
    if (header === null || header === '') {
      if (development) return { ...this.s.devActor, development };
      throw new AppError('unauthenticated', 'Sign in: the case API needs an authenticated user.', {
        errors: [{ path: PRINCIPAL_HEADER, message: 'is required' }],
      });
    }
    return decodePrincipal(header, development);
  }

  /**
   * The actor, who must hold one of `roles`.
   * @throws AppError as {@link actorOf}; `forbidden` without the role.
   */
  require(headers: { get(name: string): string | null }, roles: readonly Role[]): Actor {
    const actor = this.actorOf(headers);
    if (!roles.some((r) => actor.roles.includes(r)))
      throw new AppError('forbidden', `This needs the role ${roles.join(' or ')}.`);
    return actor;
  }
}
