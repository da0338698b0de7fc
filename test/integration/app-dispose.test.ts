/**
 * The whole app started and disposed twice in one process, every subsystem on (the case database in PGlite, the
 * ruleset, drafts, webhooks). In the first run one subsystem (the case queue) fails to dispose: every other
 * subsystem is still disposed, in the reverse of the construction order, the failure comes back as one
 * AggregateError naming it, and a second dispose disposes nothing again and answers the same. The second run,
 * built after the first was disposed, scores and disposes cleanly, twice.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { appSubsystems, createEngine, engineOf } from '../../lib/app';
import type { AppParts } from '../../lib/app/parts';
import { InProcessBus } from '../../local/in-process-bus';
import type { Config } from '../../lib/config/config';
import { createJsonLogger } from '../../lib/platform/logger';
import { startSubsystems, SubsystemError, type AnySubsystem } from '../../lib/platform/registry';
import { testConfig } from '../support/config';
import { validEvent } from '../support/events';
import { within } from '../support/eventually';
import { copyBundled } from '../model-rollout/support/models';

/** `list`, each dispose recorded in `disposed`; `failing`'s throws without disposing (its real one kept in `held`). */
function recorded(
  list: readonly AnySubsystem<AppParts>[],
  disposed: string[],
  failing: string,
  held: (() => Promise<void>)[],
): AnySubsystem<AppParts>[] {
  return list.map((s) => {
    const real = s.dispose as ((v: unknown) => unknown) | undefined;
    if (real === undefined) return s;
    return {
      ...s,
      dispose: (value: unknown) => {
        disposed.push(s.name);
        if (s.name !== failing) return real(value);
        held.push(async () => void (await real(value)));
        throw new Error(`${failing} could not stop`);
      },
    } as AnySubsystem<AppParts>;
  });
}

describe('the whole app, started and disposed twice', () => {
  let models: { dir: string; remove: () => Promise<void> };
  let dir: string;
  const lines: string[] = [];
  const deps = () => ({ logger: createJsonLogger('warn', (l) => lines.push(l)), bus: new InProcessBus() });
  const config = (run: string): Config =>
    testConfig({
      MODEL_DIR: models.dir,
      INFERENCE_MODE: 'inline',
      CASE_STORE: 'pglite',
      PGLITE_DIR: path.join(dir, `pglite-${run}`),
      DECISION_LOG_DIR: path.join(dir, `decisions-${run}`),
      REQUEST_DEADLINE_MS: '10000',
    });

  before(async () => {
    models = await copyBundled();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'app-dispose-'));
  });
  after(async () => {
    await models.remove();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('a subsystem that fails to dispose: every other one is disposed, in reverse order; one AggregateError names it', async () => {
    const disposed: string[] = [];
    const held: (() => Promise<void>)[] = [];
    const list = recorded(appSubsystems(config('1'), deps()), disposed, 'cases', held);
    const app = await within(startSubsystems(list), 'the app to start', 60_000);
    try {
      const engine = engineOf(app);
      await within(engine.start(), 'the model to load', 60_000);
      assert.ok(engine.drafts !== undefined && engine.webhooks !== undefined, 'every subsystem is on');
      const scored = await engine.score(validEvent());
      assert.match(scored.decision, /^(approve|review|decline)$/);

      const failure = await engine.dispose().then(
        () => assert.fail('the dispose should fail'),
        (e: unknown) => e,
      );
      assert.ok(failure instanceof AggregateError, String(failure));
      assert.deepEqual(
        failure.errors.map((e: SubsystemError) => [e.subsystem, e.phase, (e.cause as Error).message]),
        [['cases', 'dispose', 'cases could not stop']],
      );
      const withDispose = list.filter((s) => s.dispose !== undefined).map((s) => s.name as string);
      const expected: string[] = app.order.filter((n) => withDispose.includes(n)).reverse();
      assert.deepEqual(disposed, expected, 'every subsystem with a dispose, once, in reverse construction order');
      for (const n of ['readinessMonitor', 'serving', 'context', 'learning', 'webhooks', 'drafts', 'telemetry'])
        assert.ok(disposed.includes(n), `${n} disposed`);
      assert.ok(disposed.indexOf('webhooks') < disposed.indexOf('cases'), 'webhooks (needs cases) before cases');
      assert.ok(disposed.indexOf('cases') < disposed.indexOf('learning'), 'cases (needs learning) before learning');

      // a second dispose disposes nothing again and answers the same
      await assert.rejects(engine.dispose(), (e) => e === failure);
      assert.deepEqual(disposed, expected);
    } finally {
      for (const d of held) await d(); // the case queue's own dispose, so nothing outlives the test
    }
  });

  it('after it, a second app in the same process starts, scores and disposes cleanly; disposing twice is harmless', async () => {
    const engine = await within(createEngine(config('2'), deps()), 'the app to start', 60_000);
    let disposed = false;
    try {
      await within(engine.start(), 'the model to load', 60_000);
      const scored = await engine.score(validEvent());
      assert.match(scored.decision, /^(approve|review|decline)$/);
      await engine.dispose();
      disposed = true;
      await engine.dispose();
    } finally {
      if (!disposed) await engine.dispose().catch(() => undefined);
    }
  });
});
