/**
 * Every kind's status view (lib/rollout/rollout-status.ts), one contract for models, rulesets and signals: the same
 * assertions run against `GET /api/models/fraud`, `GET /api/rulesets/fraud-rules` and `GET /api/signals/default` (and
 * the admin changes' answers) on the embedded default (`npm start`: the models folder plays the container), after a
 * publish, a second publish, a rollback, a canary, a promote and a refused upload: the same core keys, and the same
 * meanings (active with who made it active when, the candidate and its shares, what a rollback goes back to, the
 * last change, the refused uploads newest first). What only one kind has is in its one field (the model's `fleet`).
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RolloutStatus } from '../../lib/rollout/rollout-status';
import { manifestFor, models, writeFolderModel } from '../model-rollout/support/models';
import { startEmbeddedRollout, type EmbeddedRollout } from '../model-rollout/support/embedded-rollout';
import { eventually } from '../support/eventually';

const ROOT = path.resolve(__dirname, '../../..');
const INSTANCE = 'status-contract-1';
/** The core keys of every kind's view; `shadow` is there when the kind has figures. */
const CORE = [
  'name',
  'generation',
  'serving',
  'servingCandidate',
  'active',
  'candidate',
  'previous',
  'history',
  'lastChange',
  'rejections',
];

/** One kind as the contract drives it. */
interface Kind {
  readonly label: string;
  /** `models/fraud`, … */
  readonly route: string;
  /** The kind's one field of its own, if any. */
  readonly extra?: string;
  /** Puts a version where an upload lands (the blob trigger fires on it). */
  upload(version: string): Promise<void>;
}

let rollout: EmbeddedRollout;

async function writeDocument(dir: string[], doc: Record<string, unknown>): Promise<void> {
  const d = path.join(rollout.folder.dir, ...dir);
  await fs.mkdir(d, { recursive: true });
  await fs.writeFile(path.join(d, `${String(doc['version'])}.json`), JSON.stringify(doc));
}

const shipped = async (file: string): Promise<Record<string, unknown>> =>
  JSON.parse(await fs.readFile(path.join(ROOT, file), 'utf8')) as Record<string, unknown>;

const KINDS: readonly Kind[] = [
  {
    label: 'model',
    route: 'models/fraud',
    extra: 'fleet',
    upload: async (version) => {
      const bytes = await models.same();
      await writeFolderModel(rollout.folder.dir, version, bytes, await manifestFor(version, bytes));
    },
  },
  {
    label: 'ruleset',
    route: 'rulesets/fraud-rules',
    upload: async (version) =>
      writeDocument(['rulesets', 'fraud-rules'], { ...(await shipped('rulesets/fraud-rules/1.0.0.json')), version }),
  },
  {
    label: 'signals',
    route: 'signals/default',
    upload: async (version) =>
      writeDocument(['features', 'default'], { ...(await shipped('signals/default/1.0.0.json')), version }),
  },
];

type Status = RolloutStatus & Record<string, unknown>;

async function call(kind: Kind, method: string, op = '', body?: unknown): Promise<Status> {
  const res = await fetch(`${rollout.api}/${kind.route}${op}`, {
    method,
    ...(body === undefined ? {} : { headers: { 'content-type': 'application/json' }, body: JSON.stringify(body) }),
  });
  const text = await res.text();
  assert.equal(res.status, 200, `${method} ${kind.route}${op}: ${text}`);
  return JSON.parse(text) as Status;
}

const status = (kind: Kind): Promise<Status> => call(kind, 'GET');

/** Every kind's shape: only core keys, `shadow` and the kind's one field; the arrays always there. */
function assertShape(kind: Kind, s: Status, present: readonly string[]): void {
  const allowed = new Set([...CORE, 'shadow', ...(kind.extra === undefined ? [] : [kind.extra])]);
  assert.deepEqual(
    Object.keys(s).filter((k) => !allowed.has(k)),
    [],
    `${kind.label}: no key outside the core`,
  );
  for (const k of ['name', 'generation', 'history', 'rejections', ...present])
    assert.ok(k in s, `${kind.label}: ${k} in ${JSON.stringify(s)}`);
  if (kind.extra !== undefined) assert.ok(kind.extra in s, `${kind.label}: its own field ${kind.extra}`);
  const stamp = s.active;
  if (stamp !== undefined) assert.deepEqual(Object.keys(stamp).sort(), ['at', 'by', 'version'], kind.label);
}

const versions = (s: Status): string[] => s.history.map((v) => v.version);
const change = (s: Status): unknown[] => [s.lastChange?.kind, s.lastChange?.version, s.lastChange?.by];

/** The lifecycle every kind goes through, with the same assertions. */
async function lifecycle(kind: Kind): Promise<void> {
  const at = (s: Status, what: string): string => {
    assert.match(s.active?.at ?? '', /^\d{4}-\d\d-\d\dT/, `${kind.label} ${what}: when it became active`);
    return s.active?.at ?? '';
  };
  const first = await eventually(
    () => status(kind),
    (s) => s.serving === '1.0.0',
    `${kind.label}: 1.0.0 serves`,
  );
  assertShape(kind, first, ['serving']);

  await kind.upload('1.1.0');
  const one = await eventually(
    () => status(kind),
    (s) => s.active?.version === '1.1.0' && s.serving === '1.1.0',
    `${kind.label} 1.1.0 published and served`,
    60_000,
  );
  assertShape(kind, one, ['serving', 'active', 'previous', 'lastChange']);
  assert.deepEqual(
    [one.active?.by, one.previous?.version, versions(one), change(one), one.candidate],
    [INSTANCE, '1.0.0', ['1.0.0'], ['publish', '1.1.0', INSTANCE], undefined],
    `${kind.label} after a publish`,
  );
  const publishedAt = at(one, 'publish');
  assert.ok(one.generation > first.generation, `${kind.label}: the generation moves`);

  await kind.upload('1.2.0');
  const two = await eventually(
    () => status(kind),
    (s) => s.active?.version === '1.2.0',
    `${kind.label} 1.2.0 published`,
    60_000,
  );
  assert.deepEqual([versions(two), two.previous?.version], [['1.1.0', '1.0.0'], '1.1.0'], kind.label);

  const back = await call(kind, 'POST', '/rollback');
  assertShape(kind, back, ['active', 'previous', 'lastChange']);
  assert.deepEqual(
    [back.active?.version, back.active?.at, versions(back), change(back), back.candidate],
    ['1.1.0', publishedAt, ['1.0.0'], ['rollback', '1.1.0', INSTANCE], undefined],
    `${kind.label} after a rollback: who made 1.1.0 active when is kept`,
  );
  assert.ok(back.generation > two.generation, `${kind.label}: a rollback moves the generation`);

  const canary = await call(kind, 'PUT', '/traffic', { candidate: '1.2.0', canaryPercent: 20 });
  assertShape(kind, canary, ['active', 'candidate', 'previous', 'lastChange']);
  assert.deepEqual(
    [canary.active?.version, canary.candidate, change(canary)],
    ['1.1.0', { version: '1.2.0', canaryPercent: 20, shadowPercent: 0 }, ['traffic', '1.2.0', INSTANCE]],
    `${kind.label} during a canary`,
  );
  const loaded = await eventually(
    () => status(kind),
    (s) => s.servingCandidate === '1.2.0',
    `${kind.label} candidate loaded here`,
  );
  assertShape(kind, loaded, CORE);

  const promoted = await call(kind, 'POST', '/promote', { version: '1.2.0' });
  assertShape(kind, promoted, ['active', 'previous', 'lastChange']);
  assert.deepEqual(
    [promoted.active?.version, promoted.active?.by, promoted.candidate, versions(promoted), change(promoted)],
    ['1.2.0', INSTANCE, undefined, ['1.1.0', '1.0.0'], ['promote', '1.2.0', INSTANCE]],
    `${kind.label} after a promote`,
  );
  assert.equal(at(promoted, 'promote'), promoted.lastChange?.at, `${kind.label}: promoted when the change was made`);

  await kind.upload('1.0.5');
  const refused = await eventually(
    () => status(kind),
    (s) => s.rejections[0]?.version === '1.0.5',
    `${kind.label} 1.0.5 refused`,
    60_000,
  );
  const r = refused.rejections[0];
  assert.deepEqual(
    [r?.check, r?.by, refused.active?.version, refused.generation],
    ['version', INSTANCE, '1.2.0', promoted.generation],
    `${kind.label}: a refused upload is listed first and changes nothing`,
  );
}

before(async () => {
  rollout = await startEmbeddedRollout({ INSTANCE_ID: INSTANCE });
});
after(() => rollout.dispose());

describe("every kind's status view", () => {
  for (const kind of KINDS)
    it(`${kind.label}: publish, rollback, canary, promote, a refused upload`, () => lifecycle(kind));

  it('GET /api/models lists the same view as GET /api/models/{name}', async () => {
    const model = KINDS[0] as Kind;
    const one = await status(model);
    const res = await fetch(`${rollout.api}/models`);
    const list = ((await res.json()) as { models: Status[] }).models;
    assert.deepEqual(
      list.map((s) => [s.name, s.generation, s.active, s.history, s.rejections]),
      [[one.name, one.generation, one.active, one.history, one.rejections]],
    );
  });
});
