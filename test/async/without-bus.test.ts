/**
 * lib never creates a message bus: the host passes one (`EngineDeps.bus`; `npm start` its embedded bus). With a bus,
 * async results go to its results topic with the topic's duplicate detection. With neither a bus nor a Service Bus
 * namespace, the engine's async scoring still builds, warning at start, and every publish fails `config_invalid`
 * naming the setting; the case queue (`CASE_STORE` on) fails the engine's start naming it.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import { createAsyncScorer } from '../../lib/async/create-async-scorer';
import { AppError } from '../../lib/errors/errors';
import type { SessionManager } from '../../lib/inference/session-manager';
import { createJsonLogger } from '../../lib/platform/logger';
import type { Scorer } from '../../lib/scoring/scorer';
import { InProcessBus } from '../../local/in-process-bus';
import { testConfig } from '../support/config';
import { within } from '../support/eventually';

const SETTING = 'ServiceBusConnection__fullyQualifiedNamespace';

/** Async scoring (results topic `results`) over `bus` (or none), and the log lines written while it was built. */
async function asyncScoring(
  bus: InProcessBus | undefined,
): Promise<{ publish: (id: string) => Promise<void>; lines: Record<string, unknown>[] }> {
  const lines: Record<string, unknown>[] = [];
  const { publisher } = await createAsyncScorer(testConfig({ RESULTS_TOPIC: 'results' }), {
    scorer: {} as Scorer, // never called: only the publisher is used
    sessions: {} as SessionManager,
    logger: createJsonLogger('debug', (line) => void lines.push(JSON.parse(line) as Record<string, unknown>)),
    redis: undefined,
    ...(bus === undefined ? {} : { bus }),
  });
  return { publish: (id) => publisher.publish({ messageId: id, body: { transactionId: id } }), lines };
}

describe('async results and case hand-off without the embedded bus in lib', () => {
  const dir = mkdtempSync(path.join(tmpdir(), 'test-without-bus-'));
  after(() => rmSync(dir, { recursive: true, force: true }));

  it("publishes to the host's bus's results topic, a repeated message id dropped as a duplicate", async () => {
    const bus = new InProcessBus();
    const { publish, lines } = await asyncScoring(bus);
    await publish('tx-1');
    await publish('tx-1');
    await publish('tx-2');
    assert.deepEqual(
      bus.messages('results').map((m) => m.messageId),
      ['tx-1', 'tx-2'],
    );
    assert.deepEqual(
      lines.filter((l) => l['level'] === 'warn'),
      [],
    );
  });

  it('with no bus and no namespace: warns at start, and every publish fails config_invalid naming the setting', async () => {
    const { publish, lines } = await asyncScoring(undefined);
    const warned = lines.filter((l) => l['level'] === 'warn').map((l) => String(l['msg']));
    assert.equal(warned.length, 1, JSON.stringify(lines));
    assert.match(warned[0] ?? '', new RegExp(`results publisher: none.*${SETTING}`));
    await assert.rejects(publish('tx-1'), (err: unknown) => {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'config_invalid');
      assert.deepEqual(
        err.errors.map((e) => e.path),
        [SETTING],
      );
      assert.match(err.message, new RegExp(SETTING));
      return true;
    });
  });

  it('with no bus and no namespace, an engine with the case queue on fails to start naming the setting', async () => {
    const config = testConfig({
      CASE_STORE: 'pglite',
      PGLITE_DIR: path.join(dir, 'pglite'),
      ROLLOUT_STATE_DIR: path.join(dir, 'rollout'),
    });
    await assert.rejects(
      within(createEngine(config, { logger: createJsonLogger('error', () => undefined) }), 'the start', 60_000),
      (err: unknown) => {
        assert.ok(err instanceof Error);
        assert.match(err.message, /subsystem "cases" failed to create/);
        assert.match(err.message, new RegExp(SETTING));
        assert.ok(err.cause instanceof AppError && err.cause.code === 'config_invalid', String(err.cause));
        return true;
      },
    );
  });
});
