/**
 * Subsystems a setting switches off (lib/app/switches.ts): no Engine getter throws, whatever is off; a getter of a
 * part that is off is `undefined`, exactly when the registration-time decision (`offReason`, read from the same
 * settings) says so, both with everything off and with everything on. `npm start` with the case queue off
 * (`CASE_STORE=none`) answers the case and webhook routes 404 `not_found` naming the setting, before it reads the
 * request, and still serves the rest.
 */
import assert from 'node:assert/strict';
import * as fs from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { createEngine } from '../../lib/app';
import { SWITCHED, offReason } from '../../lib/app/switches';
import { InProcessBus } from '../../local/in-process-bus';
import type { Config } from '../../lib/config/config';
import { Engine } from '../../lib/engine';
import { createJsonLogger } from '../../lib/platform/logger';
import { stopChild } from '../support/child-process';
import { testConfig } from '../support/config';
import { within } from '../support/eventually';
import { startLocalHost } from '../support/local-host';
import { copyBundled } from '../model-rollout/support/models';

/** The names of every getter of the Engine, its own and inherited. */
function getterNames(): string[] {
  const names: string[] = [];
  for (let p: object | null = Engine.prototype; p !== null && p !== Object.prototype; p = Object.getPrototypeOf(p))
    for (const [name, d] of Object.entries(Object.getOwnPropertyDescriptors(p)))
      if (d.get !== undefined && !names.includes(name)) names.push(name);
  return names;
}

/** Reads every getter of `engine`: the ones that threw, and the values of the switched ones. */
function readAll(engine: Engine): { threw: string[]; values: Map<string, unknown> } {
  const threw: string[] = [];
  const values = new Map<string, unknown>();
  for (const name of getterNames()) {
    try {
      values.set(name, (engine as unknown as Record<string, unknown>)[name]);
    } catch (err) {
      threw.push(`${name}: ${(err as Error).message}`);
    }
  }
  return { threw, values };
}

describe('subsystems off', () => {
  let models: { dir: string; remove: () => Promise<void> };
  let dir: string;
  const deps = () => ({ logger: createJsonLogger('error', () => undefined), bus: new InProcessBus() });

  before(async () => {
    models = await copyBundled();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'subsystems-off-'));
  });
  after(async () => {
    await models.remove();
    await fs.rm(dir, { recursive: true, force: true });
  });

  const cases: [string, () => Config][] = [
    ['everything off', () => testConfig({ MODEL_DIR: models.dir, CASE_STORE: 'none', RULESET_NAME: 'none' })],
    [
      'everything on',
      () =>
        testConfig({
          MODEL_DIR: models.dir,
          CASE_STORE: 'pglite',
          PGLITE_DIR: path.join(dir, 'pglite'),
          DECISION_LOG_DIR: path.join(dir, 'decisions'),
        }),
    ],
  ];
  for (const [what, config] of cases)
    it(`${what}: no getter throws; a switched getter is undefined exactly when its registration says off`, async () => {
      const c = config();
      const engine = await within(createEngine(c, deps()), 'the engine to start', 60_000);
      try {
        const { threw, values } = readAll(engine);
        assert.deepEqual(threw, [], threw.join('; '));
        assert.ok(getterNames().length > SWITCHED.length, 'the getters were found');
        for (const name of SWITCHED) {
          const reason = offReason(c, name);
          assert.equal(values.get(name) === undefined, reason !== undefined, `${name}: ${reason ?? 'on'}`);
          if (reason !== undefined) assert.match(reason, /CASE_STORE|RULESET_NAME/);
        }
      } finally {
        await engine.dispose();
      }
    });

  it('npm start with CASE_STORE=none: the case and webhook routes answer 404 naming the setting; scoring serves', async () => {
    const host = await startLocalHost({ set: { CASE_STORE: 'none' }, unset: ['IDENTITY_MODE'], ms: 120_000 });
    try {
      const calls: [string, RequestInit][] = [
        ['/cases', {}],
        ['/me', {}],
        ['/webhooks', {}],
        ['/cases/search', { method: 'POST', headers: { 'content-type': 'application/json' }, body: '{"bad":' }],
        ['/cases?unknown=1', {}],
      ];
      for (const [p, init] of calls) {
        const res = await fetch(`${host.url}${p}`, { ...init, signal: AbortSignal.timeout(20_000) });
        assert.equal(res.status, 404, p);
        assert.match(res.headers.get('content-type') ?? '', /application\/problem\+json/, p);
        const problem = (await res.json()) as { code: string; detail: string };
        assert.equal(problem.code, 'not_found', p);
        assert.match(problem.detail, /CASE_STORE/, p);
      }
      const live = await fetch(`${host.url}/health/live`, { signal: AbortSignal.timeout(20_000) });
      assert.equal(live.status, 200);
    } finally {
      await stopChild(host.child, 'the host');
    }
  });
});
