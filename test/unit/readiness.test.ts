import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import type { BackendFactory, InferenceBackend } from '../../lib/inference/backend';
import { inlineBackendFactory } from '../../lib/inference/ort-session';
import { ReadinessMonitor } from '../../lib/inference/readiness-monitor';
import { SessionManager } from '../../lib/inference/session-manager';
import { ModelFolder } from '../../lib/models/model-folder';
import { BUNDLED_MODELS } from '../support/models';
import { FakeTimers, settle } from '../support/clock';

const cpu = { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' } as const;
type Fault = 'none' | 'nan' | 'overloaded' | 'crash';

/** The real inline ORT backend, counting runs; `fault` makes the next runs misbehave (fault injection). */
function faulty(): { factory: BackendFactory; runs: number; fault: Fault } {
  const real = inlineBackendFactory(cpu);
  const s = {
    runs: 0,
    fault: 'none' as Fault,
    factory: {
      load: async (model: Parameters<BackendFactory['load']>[0]): Promise<InferenceBackend> => {
        const b = await real.load(model);
        return {
          info: b.info,
          run: async (input, rows, o) => {
            s.runs++;
            if (s.fault === 'overloaded') throw new AppError('overloaded', 'queue full');
            if (s.fault === 'crash') throw new AppError('inference_failed', 'worker died');
            const r = await b.run(input, rows, o);
            return s.fault === 'nan' ? { ...r, scores: new Float32Array(rows).fill(Number.NaN) } : r;
          },
          infer: (r, o) => b.infer(r, o),
          dispose: () => b.dispose(),
        };
      },
    } as BackendFactory,
  };
  return s;
}

describe('readiness from held state, refreshed in the background', () => {
  const time = new FakeTimers();
  const wall = (): number => 1_700_000_000_000 + time.now();
  const backend = faulty();
  let sm: SessionManager;
  let monitor: ReadinessMonitor;
  let lastProbe: Promise<unknown> | undefined;
  const INTERVAL = 15_000;

  before(async () => {
    sm = await SessionManager.create({
      source: new ModelFolder(BUNDLED_MODELS, 'fraud', undefined, FEATURE_NAMES),
      factory: backend.factory,
      wallNow: wall,
    });
    const probes = { probe: () => (lastProbe = sm.probe()) }; // the monitor's probes, to await them
    monitor = new ReadinessMonitor({ sessions: probes, intervalMs: INTERVAL, timers: time });
    monitor.start();
  });
  after(async () => {
    await monitor.dispose();
    await sm.dispose();
  });

  /** Fires the next background probe and waits for it to finish. */
  async function tick(): Promise<void> {
    lastProbe = undefined;
    time.advance(INTERVAL);
    assert.ok(lastProbe !== undefined, 'the interval must start a probe');
    await lastProbe;
    await settle(); // the monitor schedules the next one
  }

  it('is not ready before the model loads, and reports nothing checked', async () => {
    await tick(); // nothing loaded: the probe runs no inference
    assert.equal(backend.runs, 0);
    const h = sm.health;
    assert.equal(h.ready, false);
    assert.equal(h.checkedAt, undefined);
  });

  it('is ready from the warm-up inference at load, and answering runs nothing', async () => {
    await sm.ensureReady();
    const runs = backend.runs;
    const h = sm.health;
    assert.ok(h.ready && h.model.name === 'fraud');
    assert.equal(h.checkedAt, wall());
    for (let i = 0; i < 100; i++) assert.equal(sm.health.ready, true);
    assert.equal(backend.runs, runs, 'reading readiness must not run an inference');
  });

  it('refreshes in the background every interval, with one sample inference each time', async () => {
    const runs = backend.runs;
    await tick();
    assert.equal(backend.runs, runs + 1);
    assert.equal(sm.health.checkedAt, wall());
    await tick();
    assert.equal(backend.runs, runs + 2);
    assert.equal(sm.health.checkedAt, wall());
  });

  it('turns not ready, with the reason, when the sample inference goes bad, and ready again when it recovers', async () => {
    backend.fault = 'nan';
    await tick();
    const bad = sm.health;
    assert.equal(bad.ready, false);
    assert.ok(!bad.ready && /not a finite number/.test(bad.reason) && bad.model?.version === '1.0.0');
    backend.fault = 'crash';
    await tick();
    assert.ok(!sm.health.ready && /worker died/.test((sm.health as { reason: string }).reason));
    backend.fault = 'none';
    await tick();
    assert.equal(sm.health.ready, true);
  });

  it('keeps the last state when the probe only found the queue busy (busy is not broken)', async () => {
    const before = sm.health;
    backend.fault = 'overloaded';
    await tick();
    assert.deepEqual(sm.health, before);
    backend.fault = 'none';
  });

  it('is refreshed at a swap: the new version is reported at once, then probed', async () => {
    const artifact = await new ModelFolder(BUNDLED_MODELS, 'fraud', undefined, FEATURE_NAMES).load();
    const next = await sm.prepare(artifact);
    const runs = backend.runs;
    time.advance(1234);
    sm.activate({ ...artifact.manifest, version: '1.0.1' }, next);
    assert.ok(sm.health.ready && sm.health.model.version === '1.0.1');
    assert.equal(sm.health.checkedAt, wall());
    await sm.probe();
    assert.equal(backend.runs, runs + 1, 'one probe after the swap');
  });

  it('stops probing once disposed', async () => {
    await monitor.dispose();
    const runs = backend.runs;
    time.advance(10 * INTERVAL);
    await settle();
    assert.equal(backend.runs, runs);
    assert.equal(time.pending.size, 0);
  });
});
