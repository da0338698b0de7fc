import { z } from 'zod';

/** Shared zod building blocks of the settings schemas: empty strings count as unset. */
export const emptyToUndefined = (v: unknown): unknown => (typeof v === 'string' && v.trim() === '' ? undefined : v);
export const int = (min: number, max: number, def: number) =>
  z.preprocess(
    emptyToUndefined,
    z.coerce.number({ error: 'must be a number' }).int({ error: 'must be an integer' }).min(min).max(max).default(def),
  );
export const num = (min: number, max: number, def: number) =>
  z.preprocess(emptyToUndefined, z.coerce.number({ error: 'must be a number' }).min(min).max(max).default(def));
export const optStr = z.preprocess(emptyToUndefined, z.string().optional());
export const bool = (def: boolean) =>
  z
    .preprocess(
      emptyToUndefined,
      z.enum(['true', 'false', '1', '0'], { error: 'must be true or false' }).default(def ? 'true' : 'false'),
    )
    .transform((v) => v === 'true' || v === '1');
