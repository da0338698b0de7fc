/**
 * Builds the pointer store of one artifact kind: on Redis when a client is configured, else in process, kept in
 * `{stateDir}/{file}` when a state dir is set (embedded defaults: `ROLLOUT_STATE_DIR`, so that a promote or rollback
 * survives a restart as it does on Redis).
 * @module
 */
import * as path from 'node:path';
import type { Redis } from 'ioredis';
import { JsonFileMap } from '../persistence/json-file-map';
import { MemoryPointerStore, type Generational, type PointerStore } from './pointer-store';
import { RedisPointerStore } from './redis-pointer-store';

/** What {@link createPointerStore} needs. */
export interface PointerStoreOptions<S> {
  /** The artifact kind, e.g. `model` (Redis keys `{prefix}{kind}:v1:…`). */
  readonly kind: string;
  readonly redis: Redis | (() => Redis | undefined) | undefined;
  readonly prefix: string;
  readonly stateDir: string | undefined;
  /** The file in `stateDir`, e.g. `models.json`. */
  readonly file: string;
  /** A stored state's JSON text → the state. */
  readonly parse?: (text: string) => S;
  /** Told when the state file cannot be read or written. */
  readonly warn: (message: string) => void;
}

/** The pointer store of one kind (Redis, or in process). */
export function createPointerStore<S extends Generational>(o: PointerStoreOptions<S>): PointerStore<S> {
  if (o.redis !== undefined) return new RedisPointerStore<S>(o.redis, o.prefix, o.kind, o.parse);
  const file = o.stateDir === undefined ? undefined : new JsonFileMap<S>(path.join(o.stateDir, o.file), o.warn);
  return new MemoryPointerStore<S>(file, o.parse);
}
