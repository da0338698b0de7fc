import { z } from 'zod';
import type { UserProfile } from '../domain/user-context';

/** Schema of a stored {@link UserProfile} (origin records and cached values are checked against it). */
export const userProfileSchema = z.strictObject({
  homeCountry: z.string().regex(/^[A-Z]{2}$/),
  usualAmount: z.number().finite().nonnegative(),
  knownDevices: z.array(z.string().min(1).max(128)).max(1000),
  accountCreatedAt: z.string().refine((t) => Number.isFinite(Date.parse(t))),
});

/** Validates an unknown value as a profile; `undefined` when it is not one. */
export function asUserProfile(value: unknown): UserProfile | undefined {
  const r = userProfileSchema.safeParse(value);
  return r.success ? r.data : undefined;
}
