/** Signals documents and a signals rollout on an in-process pointer store and a temporary folder, for the tests. */
import { mkdtemp, mkdir, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import { MemoryPointerStore } from '../../lib/rollout/pointer-store';
import { compileSignals } from '../../lib/signals/compile-signals';
import { folderSignalsRepository } from '../../lib/signals/signals-repository';
import { SignalsRollout } from '../../lib/signals/signals-rollout';
import { SignalsServing } from '../../lib/signals/signals-serving';
import type { SignalsState } from '../../lib/signals/signals-traffic';
import type { SignalsRequirement } from '../../lib/signals/signals-upload';

/** The shipped model's 17 features, as builtins. */
export const BUILTINS = FEATURE_NAMES.map((name) => ({ name, builtin: name }));

/** `card_users_1h`: distinct users per card fingerprint over an hour (the example). */
export const CARD_USERS = { name: 'card_users_1h', key: 'cardFingerprint', op: 'distinct', of: 'userId', window: '1h' };

/** A signals document `default` at `version`: the 17 builtins, and `extra` on top. */
export function signalsDoc(version: string, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return { schemaVersion: 1, name: 'default', version, aggregates: [], features: BUILTINS, ...extra };
}

/** A signals rollout over a temporary folder (`dir/default/{version}.json`), serving `1.0.0` as shipped. */
export interface TestRollout {
  readonly rollout: SignalsRollout;
  readonly serving: SignalsServing;
  readonly store: MemoryPointerStore<SignalsState>;
  readonly dir: string;
  /** What serves reads (mutable). */
  readonly requirements: SignalsRequirement[];
  /** Writes a document where the repository reads it. */
  write(doc: Record<string, unknown>): Promise<void>;
  dispose(): Promise<void>;
}

const noTimers = { setTimeout: () => 0, clearTimeout: () => undefined };

export async function testRollout(): Promise<TestRollout> {
  const dir = await mkdtemp(path.join(os.tmpdir(), 'signals-'));
  const serving = new SignalsServing(compileSignals(signalsDoc('1.0.0')));
  const store = new MemoryPointerStore<SignalsState>();
  const requirements: SignalsRequirement[] = [];
  const rollout = new SignalsRollout({
    name: 'default',
    serving,
    store,
    repository: folderSignalsRepository(dir),
    requirements: () => requirements,
    timers: noTimers,
    reconcileMs: 60_000,
    instanceId: 'test-instance',
  });
  return {
    rollout,
    serving,
    store,
    dir,
    requirements,
    write: async (doc) => {
      await mkdir(path.join(dir, 'default'), { recursive: true });
      await writeFile(path.join(dir, 'default', `${String(doc['version'])}.json`), JSON.stringify(doc));
    },
    dispose: async () => {
      await rollout.dispose();
      await rm(dir, { recursive: true, force: true });
    },
  };
}
