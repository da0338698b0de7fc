/**
 * The aggregate store in process memory (`npm start` without Redis): the same rings and answers as the Redis
 * store (lib/signals/aggregate-ring.ts), for one process only.
 * @module
 */
import { LRUCache } from 'lru-cache';
import type { AggregateInput, AggregatePlan, AggregateSpec, AggregateStore } from './aggregate-store';
import {
  addendOf,
  bucketOf,
  DEFAULT_MAX_RECORDS_PER_ENTITY,
  defaultAggregateHash,
  hashWidth,
  newRing,
  preparePlan,
  ringAdd,
  ringRead,
  SLOTS,
  type PreparedGroup,
  type Ring,
} from './aggregate-ring';

/** Options of a {@link MemoryAggregateStore}. */
export interface MemoryAggregateStoreOptions {
  /** Most entities (a key group's value) held, least recently used dropped first. Default 100 000. */
  readonly maxEntities?: number;
  /** Most estimated bytes held over all entities. Default 256 MiB. */
  readonly maxBytes?: number;
  /** Idempotency records kept per entity, the oldest forgotten first. Default 1 000. */
  readonly maxRecordsPerEntity?: number;
  /** Hash of raw values (entities, distinct members), fixed width. Default: truncated SHA-256. */
  readonly hash?: (value: string) => string;
}

/** One recorded transaction's answer for an entity: `values[j]` is aggregate `ids[j]`'s. */
interface TxRecord {
  readonly ids: readonly string[];
  readonly values: readonly number[];
}

/** One entity: the rings of its aggregates (by aggregate id), its idempotency records, its estimated size. */
interface Entity {
  readonly rings: Map<string, Ring>;
  readonly records: Map<string, TxRecord>;
  bytes: number;
  /** The size the LRU holds for it: `bytes` rounded up to {@link SIZE_STEP}. */
  sized: number;
}

/** The LRU's size of an entity changes in steps of this many bytes (so most payments need no `set`). */
const SIZE_STEP = 1024;
/** Estimated bytes: an entity, a ring, a distinct member, a record (+ per value). */
const ENTITY_BYTES = 200;
const RING_BYTES = 64 + SLOTS * 24;
const MEMBER_BYTES = 80;
const RECORD_BYTES = 120;
const RECORD_VALUE_BYTES = 16;

/**
 * Aggregates in process memory. Bounded: an LRU of entities (`maxEntities`, and `maxBytes` of estimated size), a
 * fixed ring per aggregate (distinct: at most `cap` members per slot), at most `maxRecordsPerEntity` idempotency
 * records per entity (a retry of a transaction older than the last `maxRecordsPerEntity` of its entity counts
 * again). A dropped entity starts from zero. Raw values are hashed before they are kept. Entities do not expire by
 * time (a read never takes a bucket outside its window; the LRU bounds the memory). `record` runs to its end
 * without yielding, so concurrent payments each see the ones recorded before them.
 */
export class MemoryAggregateStore implements AggregateStore {
  private readonly entities: LRUCache<string, Entity>;
  private readonly maxRecords: number;
  private readonly hash: (value: string) => string;

  constructor(options: MemoryAggregateStoreOptions = {}) {
    this.hash = options.hash ?? defaultAggregateHash;
    hashWidth(this.hash);
    this.maxRecords = Math.max(1, options.maxRecordsPerEntity ?? DEFAULT_MAX_RECORDS_PER_ENTITY);
    this.entities = new LRUCache<string, Entity>({
      max: options.maxEntities ?? 100_000,
      maxSize: options.maxBytes ?? 256 * 1024 * 1024,
    });
  }

  /** Entities held (tests). */
  get size(): number {
    return this.entities.size;
  }

  record(plan: AggregatePlan, input: AggregateInput): Promise<Float64Array> {
    const out = new Float64Array(plan.aggregates.length);
    const groups = preparePlan(plan);
    for (let g = 0; g < groups.length; g++) {
      const entity = input.entities[g];
      if (entity !== undefined) this.recordGroup(groups[g] as PreparedGroup, entity, input, out);
    }
    return Promise.resolve(out);
  }

  private recordGroup(pg: PreparedGroup, entityValue: string, input: AggregateInput, out: Float64Array): void {
    const key = `${pg.group.id}:${this.hash(entityValue)}`;
    let entity = this.entities.get(key);
    entity ??= { rings: new Map(), records: new Map(), bytes: ENTITY_BYTES + key.length * 2, sized: 0 };
    const prev = entity.records.get(input.transactionId);
    let ids: string[] | undefined;
    const values: number[] = [];
    for (let j = 0; j < pg.specs.length; j++) {
      const spec = pg.specs[j] as AggregateSpec;
      const i = pg.indexes[j] as number;
      const known = prev === undefined ? -1 : prev.ids.indexOf(spec.id);
      if (prev !== undefined && known >= 0) {
        out[i] = prev.values[known] as number;
        continue;
      }
      let ring = entity.rings.get(spec.id);
      if (ring === undefined) {
        entity.rings.set(spec.id, (ring = newRing(spec.op)));
        entity.bytes += RING_BYTES + spec.id.length * 2;
      }
      const cur = bucketOf(input.at, spec);
      const addend = addendOf(spec, input.counted[i], input.values[i], this.hash);
      if (addend !== undefined) entity.bytes += ringAdd(ring, spec, cur, addend) * MEMBER_BYTES;
      out[i] = ringRead(ring, spec, cur);
      if (prev !== undefined) (ids ??= []).push(spec.id);
      values.push(out[i]);
    }
    if (values.length > 0) this.remember(entity, input.transactionId, prev, ids ?? pg.ids, values);
    const sized = Math.ceil(entity.bytes / SIZE_STEP) * SIZE_STEP;
    if (sized !== entity.sized) this.entities.set(key, entity, { size: (entity.sized = sized) });
  }

  /** Records (or extends) a transaction's answer, forgetting the oldest records beyond the cap. */
  private remember(
    entity: Entity,
    tx: string,
    prev: TxRecord | undefined,
    ids: readonly string[],
    values: number[],
  ): void {
    const rec: TxRecord =
      prev === undefined ? { ids, values } : { ids: [...prev.ids, ...ids], values: [...prev.values, ...values] };
    entity.bytes += RECORD_VALUE_BYTES * ids.length + (prev === undefined ? RECORD_BYTES + tx.length * 2 : 0);
    entity.records.set(tx, rec);
    if (entity.records.size <= this.maxRecords) return;
    for (const [old, r] of entity.records) {
      entity.records.delete(old);
      entity.bytes -= RECORD_BYTES + old.length * 2 + RECORD_VALUE_BYTES * r.ids.length;
      if (entity.records.size <= this.maxRecords) break;
    }
  }

  dispose(): Promise<void> {
    this.entities.clear();
    return Promise.resolve();
  }
}
