/**
 * The fleet pointer of one model name, and the pure transitions that change it (publish, promote,
 * rollback, traffic). Stores persist it with compare-and-set on `generation`; every instance converges on
 * it. The rules are every kind's (`lib/rollout/rollout-rules.ts`): versions only move forward, except through an
 * explicit rollback. What the model kind adds: the pointer of each version (where it is, its hash), its manifest and
 * validation, and the golden set.
 */
import { z } from 'zod';
import { AppError } from '../errors/errors';
import { manifestSchema, type ModelManifest } from '../models/manifest';
import { compareVersions } from '../models/model-folder';
import {
  MAX_HISTORY,
  RolloutMachine,
  RolloutRules,
  type RolloutPointers,
  type TrafficSplit,
} from '../rollout/rollout-rules';

export type { TrafficSplit } from '../rollout/rollout-rules';

/** Older active versions kept for rollback (every kind's {@link MAX_HISTORY}). */
export const MAX_PREVIOUS = MAX_HISTORY;

/** The rules as the model kind's messages name them. */
export const MODEL_RULES = new RolloutRules('model', 'models');
/** Every kind's state machine, over model pointers. */
const MACHINE = new RolloutMachine<ModelPointer>(MODEL_RULES, (p) => p.version);
/** Validated versions remembered (active, previous and candidate are never evicted). */
export const MAX_VERSIONS = 16;
/** Most golden rows kept for a model name. */
export const MAX_GOLDEN_ROWS = 1000;

const pointerSchema = z.strictObject({
  name: z.string(),
  version: z.string(),
  /** `{container}/{name}/{version}.onnx`, or `bundled:{name}/{version}` for the model shipped with the app. */
  blobPath: z.string(),
  sha256: z.string(),
  source: z.enum(['repository', 'bundled']),
  /** Instance id of the publisher (or of the instance that served an admin call). */
  publishedBy: z.string(),
  /** ISO 8601. */
  publishedAt: z.string(),
});

const shiftSchema = z.strictObject({
  against: z.string(),
  /** Mean absolute score difference over the golden rows. */
  meanAbs: z.number(),
  maxAbs: z.number(),
  rows: z.number(),
  bound: z.number().optional(),
  exceeded: z.boolean(),
});

const validationSchema = z.strictObject({
  sizeBytes: z.number(),
  batchSizes: z.array(z.number()),
  goldenRows: z.number(),
  goldenSource: z.enum(['manifest', 'kept', 'none']),
  shift: shiftSchema.optional(),
  forced: z.boolean(),
  loadMs: z.number(),
});

const stateSchema = z.strictObject({
  schema: z.literal(1),
  name: z.string(),
  /** Bumped by every change; stores compare-and-set on it. */
  generation: z.number().int(),
  active: pointerSchema,
  /** Earlier active versions, newest first (rollback pops the first). */
  previous: z.array(pointerSchema),
  /** Validated versions by version string. */
  versions: z.record(
    z.string(),
    z.strictObject({ pointer: pointerSchema, manifest: manifestSchema, validation: validationSchema.optional() }),
  ),
  traffic: z.strictObject({ candidate: z.string(), canaryPercent: z.number(), shadowPercent: z.number() }).optional(),
  /** The golden set kept for the model name (from the last manifest that shipped one). */
  golden: z.strictObject({ inputs: z.array(z.array(z.number())), from: z.string() }).optional(),
  lastChange: z.strictObject({
    kind: z.enum(['publish', 'promote', 'rollback', 'traffic']),
    version: z.string(),
    by: z.string(),
    at: z.string(),
  }),
});

export type ModelPointer = z.infer<typeof pointerSchema>;
export type ShiftReport = z.infer<typeof shiftSchema>;
export type ValidationSummary = z.infer<typeof validationSchema>;
export type FleetState = z.infer<typeof stateSchema>;
/** A validated version: where it is, its manifest and how it validated. */
export interface VersionRecord {
  readonly pointer: ModelPointer;
  readonly manifest: ModelManifest;
  readonly validation?: ValidationSummary;
}
/** Who made a change and when (ISO 8601). */
export interface ChangeActor {
  readonly by: string;
  readonly at: string;
}
/** A transition's result: the new state, or the same one when nothing changed (idempotent repeats). */
export interface Transition {
  readonly state: FleetState;
  readonly changed: boolean;
}

/** Parses a stored state. @throws AppError `dependency_unavailable` if the stored value is unreadable. */
export function parseFleetState(text: string): FleetState {
  try {
    return stateSchema.parse(JSON.parse(text));
  } catch (err) {
    throw new AppError('dependency_unavailable', 'The stored model pointer is unreadable.', {
      cause: err,
      transient: true,
    });
  }
}

function conflict(message: string): AppError {
  return new AppError('conflict', message, { transient: false });
}

function unknownVersion(state: FleetState, version: string): AppError {
  return new AppError(
    'not_found',
    `Version ${version} of ${state.name} has not been validated (known: ${Object.keys(state.versions).sort(compareVersions).join(', ')}).`,
    {
      transient: false,
      errors: [{ path: 'version', message: 'must be a validated version of the model' }],
    },
  );
}

/** The pointers of `s`, as the machine reads them. */
const pointersOf = (s: FleetState): RolloutPointers<ModelPointer> => ({
  active: s.active,
  previous: s.previous,
  traffic: s.traffic,
});

/**
 * `s` with the machine's next pointers (a model's pointer always has an active version: the baseline is recorded at
 * the first publication), the next generation and the change.
 */
function withPointers(s: FleetState, m: RolloutPointers<ModelPointer>, change: FleetState['lastChange']): FleetState {
  const { traffic: _t, ...rest } = s;
  return bounded({
    ...rest,
    generation: s.generation + 1,
    active: m.active ?? s.active,
    previous: [...m.previous],
    ...(m.traffic === undefined ? {} : { traffic: m.traffic }),
    lastChange: change,
  });
}

/** Drops the oldest versions nobody points at, down to {@link MAX_VERSIONS}. */
function bounded(s: FleetState): FleetState {
  const keep = new Set([
    s.active.version,
    ...s.previous.map((p) => p.version),
    ...(s.traffic === undefined ? [] : [s.traffic.candidate]),
  ]);
  const evictable = Object.keys(s.versions)
    .filter((v) => !keep.has(v))
    .sort(compareVersions);
  const versions = { ...s.versions };
  while (Object.keys(versions).length > MAX_VERSIONS && evictable.length > 0)
    delete versions[evictable.shift() as string];
  return { ...s, versions };
}

/**
 * Publishes a validated version: as the new active version (default) or only as a candidate for
 * canary/shadow. The first publish of a name records `baseline` (the version being served) as the one to
 * roll back to. Repeating a publish of the same content is a no-op (blob triggers may fire twice).
 * @throws AppError `model_invalid` (not newer than the active version), `conflict` (same version, other content).
 */
export function publishVersion(
  current: FleetState | undefined,
  rec: VersionRecord,
  opts: {
    readonly mode: 'active' | 'candidate';
    readonly baseline?: VersionRecord;
    readonly golden?: readonly (readonly number[])[];
  } & ChangeActor,
): Transition {
  const v = rec.pointer.version;
  let s: FleetState;
  if (current !== undefined) s = current;
  else if (opts.baseline !== undefined) {
    const b = opts.baseline;
    s = {
      schema: 1,
      name: rec.pointer.name,
      generation: 0,
      active: b.pointer,
      previous: [],
      versions: { [b.pointer.version]: b },
      lastChange: { kind: 'publish', version: b.pointer.version, by: b.pointer.publishedBy, at: b.pointer.publishedAt },
    };
  } else {
    s = {
      schema: 1,
      name: rec.pointer.name,
      generation: 0,
      active: rec.pointer,
      previous: [],
      versions: {},
      lastChange: { kind: 'publish', version: v, by: opts.by, at: opts.at },
    };
  }
  const known = s.versions[v];
  if (known !== undefined) {
    if (known.pointer.sha256 !== rec.pointer.sha256)
      throw conflict(
        `Version ${v} of ${s.name} was already published with other content; versions are immutable: upload a new version.`,
      );
    return { state: s, changed: current === undefined };
  }
  const notNewer = MODEL_RULES.notNewer(v, s.active.version, 'model_invalid');
  if (notNewer !== undefined) throw notNewer;
  const golden =
    opts.golden === undefined || opts.golden.length === 0
      ? s.golden
      : { inputs: opts.golden.slice(0, MAX_GOLDEN_ROWS).map((r) => [...r]), from: v };
  const withVersion: FleetState = {
    ...s,
    versions: { ...s.versions, [v]: rec },
    ...(golden === undefined ? {} : { golden }),
  };
  const m = opts.mode === 'active' ? MACHINE.activate(pointersOf(s), rec.pointer) : undefined;
  return {
    state: withPointers(withVersion, m ?? pointersOf(s), { kind: 'publish', version: v, by: opts.by, at: opts.at }),
    changed: true,
  };
}

/**
 * Makes a validated version active on every instance.
 * @throws AppError `not_found` (not a validated version), `conflict` (the active version already, which would
 *   change nothing; or older than the active version: roll back instead).
 */
export function promoteVersion(s: FleetState, version: string, actor: ChangeActor): Transition {
  const rec = s.versions[version];
  if (rec === undefined) throw unknownVersion(s, version);
  const m = MACHINE.promote(s.name, pointersOf(s), { ...rec.pointer, publishedBy: actor.by, publishedAt: actor.at });
  return { state: withPointers(s, m ?? pointersOf(s), { kind: 'promote', version, ...actor }), changed: true };
}

/** Goes back to the previous pointer and ends any canary or shadow. @throws AppError `conflict` when there is nothing to roll back to. */
export function rollbackVersion(s: FleetState, actor: ChangeActor): Transition {
  const m = MACHINE.rollBack(s.name, pointersOf(s));
  const back = m.active?.version ?? s.active.version;
  return { state: withPointers(s, m, { kind: 'rollback', version: back, ...actor }), changed: true };
}

/**
 * Sets the candidate's share: `canaryPercent` of users (stable per user) are served by it; `shadowPercent`
 * of requests are also scored by it off the response path. Both 0 ends the candidate.
 * @throws AppError `not_found` (not a validated version), `conflict` (the candidate is the active version).
 */
export function setTraffic(s: FleetState, split: TrafficSplit, actor: ChangeActor): Transition {
  if (s.versions[split.candidate] === undefined) throw unknownVersion(s, split.candidate);
  const m = MACHINE.traffic(pointersOf(s), split);
  if (m === undefined) return { state: s, changed: false };
  return { state: withPointers(s, m, { kind: 'traffic', version: split.candidate, ...actor }), changed: true };
}
