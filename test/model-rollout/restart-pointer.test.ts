/**
 * A restart serves only what the pointer says (embedded defaults: the models folder is also the models container,
 * the pointers are kept in ROLLOUT_STATE_DIR). A restart is: dispose the engine, build a new one over the same
 * folder and state dir.
 * - A refused upload left in the folder never serves after a restart: without a pointer the shipped version serves
 *   (`models/fraud/shipped.json`), never the folder's newest file; nor does an upload that landed while the instance
 *   was down.
 * - A promoted approved draft (read from the case database, PGlite here) after a restart: readiness is 503 naming
 *   the ruleset it waits for (serving 1.0.0, active 1.1.0) until the draft serves, then 200; the follower retries
 *   soon after the failed first pass (hand-driven timers: no reconcile period passes).
 */
import assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine, type EngineDeps } from '../../lib/app';
import { RETRY_FIRST_MS } from '../../lib/decisioning/ruleset-rollout';
import type { Engine } from '../../lib/engine';
import { encodePrincipal } from '../../lib/identity/principal';
import { silentLogger } from '../../lib/platform/logger';
import { InProcessBus } from '../../local/in-process-bus';
import { FakeTimers } from '../support/clock';
import { testConfig } from '../support/config';
import { eventually } from '../support/eventually';
import { validEvent } from '../support/events';
import { bundledBytes, copyBundled, manifestFor, models, writeFolderModel } from './support/models';

const SHIPPED_RULESET = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');
let folder: Awaited<ReturnType<typeof copyBundled>>;
let stateDir: string;
const engines = new Set<Engine>();

async function start(env: Record<string, string>, deps: EngineDeps = {}): Promise<Engine> {
  const config = testConfig({
    MODEL_DIR: folder.dir,
    ROLLOUT_STATE_DIR: stateDir,
    INFERENCE_WORKERS: '1',
    CASE_STORE: 'none',
    LOG_LEVEL: 'error',
    ...env,
  });
  const engine = await createEngine(config, { logger: silentLogger, bus: new InProcessBus(), ...deps });
  engines.add(engine);
  return engine;
}

async function stop(engine: Engine): Promise<void> {
  engines.delete(engine);
  await engine.dispose();
}

before(async () => {
  folder = await copyBundled();
  stateDir = await fs.mkdtemp(path.join(os.tmpdir(), 'restart-pointer-'));
});
after(async () => {
  for (const e of engines) await e.dispose();
  await folder.remove();
  await fs.rm(stateDir, { recursive: true, force: true });
});

describe('a restart serves only what the pointer says', () => {
  it('a refused upload, then a restart: the previous version serves; so does an upload landed while down', async () => {
    const first = await start({});
    await first.start();
    assert.equal(first.sessions.manifest?.version, '1.0.0');
    // 1.1.0 fails the golden set: refused, nothing published (no pointer at all), its files stay in the folder
    const bad = models.goldenFails();
    await writeFolderModel(folder.dir, '1.1.0', bad, await manifestFor('1.1.0', bad));
    const outcome = await first.models.handleUpload({ blobPath: 'models/fraud/1.1.0.onnx' });
    assert.equal(outcome.kind, 'rejected', JSON.stringify(outcome));
    assert.equal((await first.models.status('fraud')).generation, 0, 'no pointer: nothing was published');
    await stop(first);

    const good = await bundledBytes();
    await writeFolderModel(folder.dir, '1.2.0', good, await manifestFor('1.2.0', good)); // landed while down
    const second = await start({});
    await second.start();
    assert.equal(second.sessions.manifest?.version, '1.0.0', 'the shipped version, not the newest file');
    assert.equal((await second.score(validEvent())).model.version, '1.0.0');
    assert.deepEqual(second.ready(), { status: 'ready', model: { name: 'fraud', version: '1.0.0' } });
    await stop(second);
  });
});

describe('a promoted approved draft, then a restart', () => {
  const pglite = mkdtempSync(path.join(os.tmpdir(), 'restart-draft-'));
  const lead = (name: string): { get(n: string): string | null } => {
    const v = encodePrincipal(name, ['lead']);
    return { get: (n) => (n === 'x-ms-client-principal' ? v : null) };
  };
  const env = {
    CASE_STORE: 'pglite',
    PGLITE_DIR: pglite,
    IDENTITY_MODE: 'easyauth',
    RULESET_DIRECT_ROLLOUT: 'false',
    ROLLOUT_STATE_DIR: mkdtempSync(path.join(os.tmpdir(), 'restart-draft-state-')),
  };
  after(() => {
    rmSync(pglite, { recursive: true, force: true });
    rmSync(env.ROLLOUT_STATE_DIR, { recursive: true, force: true });
  });

  it('is not ready (naming the ruleset it waits for) until the draft serves, then ready', async () => {
    const first = await start(env);
    await first.start();
    const { drafts, rulesetAdmin } = first;
    assert.ok(drafts !== undefined && rulesetAdmin !== undefined, 'drafts are on (a ruleset and a case database)');
    const doc = { ...(JSON.parse(await fs.readFile(SHIPPED_RULESET, 'utf8')) as object), version: '1.1.0' };
    await drafts.create(lead('lead-a'), 'fraud-rules', doc);
    const now = Date.now();
    const window = { from: new Date(now - 3_600_000).toISOString(), to: new Date(now).toISOString() };
    await drafts.backtest(lead('lead-a'), 'fraud-rules', '1.1.0', window);
    await eventually(
      () => drafts.get(lead('lead-a'), 'fraud-rules', '1.1.0'),
      (d) => d.backtest?.state === 'done',
      'the backtest of the draft to end',
      30_000,
    );
    await drafts.submit(lead('lead-a'), 'fraud-rules', '1.1.0', {});
    await drafts.approve(lead('lead-b'), 'fraud-rules', '1.1.0', {});
    await rulesetAdmin.promote('fraud-rules', { version: '1.1.0' });
    assert.equal((await first.rulesets?.status('fraud-rules'))?.serving, '1.1.0');
    await stop(first);

    const time = new FakeTimers(); // the follower's timers: no retry and no reconcile run unless advanced
    const second = await start(env, { decisioning: { timers: time } });
    await second.start();
    // the first pass ran before the case database was open: the shipped version serves, readiness says why
    const waiting = second.ready();
    assert.equal(waiting.status, 'not_ready');
    assert.deepEqual(
      waiting.waitingFor?.map((w) => [w.kind, w.name, w.serving, w.active]),
      [['ruleset', 'fraud-rules', '1.0.0', '1.1.0']],
      JSON.stringify(waiting),
    );
    assert.match(second.healthDetail().reason ?? '', /ruleset fraud-rules: serving 1\.0\.0, active 1\.1\.0/);
    // the retry after the incomplete pass (the case database is open by now), long before the reconcile period
    time.advance(RETRY_FIRST_MS);
    await eventually(
      () => Promise.resolve(second.ready()),
      (r) => r.status === 'ready',
      'readiness once the approved draft serves',
      30_000,
    );
    assert.equal((await second.rulesets?.status('fraud-rules'))?.serving, '1.1.0');
    assert.deepEqual(second.ready(), { status: 'ready', model: { name: 'fraud', version: '1.0.0' } });
    await stop(second);
  });
});
