/**
 * What the signals rollout starts from and checks against: the highest shipped version that compiles serves (a
 * refused newer one is reported, naming it), none shipped fails the start naming SIGNALS_NAME; and what serves reads
 * (the model versions' input features, the ruleset's signals), each named by kind, name and version.
 */
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { AppError } from '../../lib/errors/errors';
import type { ModelManifest } from '../../lib/models/manifest';
import { shippedSignals } from '../../lib/signals/create-signals';
import { allRequirements, modelRequirements, rulesetRequirements } from '../../lib/signals/signals-requirements';
import { signalsDoc } from './support';

let dir: string;
before(async () => {
  dir = await mkdtemp(path.join(os.tmpdir(), 'signals-shipped-'));
  await mkdir(path.join(dir, 'default'));
  await writeFile(path.join(dir, 'default', '1.0.0.json'), JSON.stringify(signalsDoc('1.0.0')));
  await writeFile(
    path.join(dir, 'default', '1.1.0.json'),
    JSON.stringify(signalsDoc('1.1.0', { features: [{ name: 'x', builtin: 'no_such_builtin' }] })),
  );
});
after(() => rm(dir, { recursive: true, force: true }));

describe('the shipped signals version', () => {
  it('is the highest that compiles; a refused newer one is reported by version', async () => {
    const refused: { version: string; reason: string }[] = [];
    const s = await shippedSignals(dir, 'default', (e) => refused.push(e));
    assert.equal(s.version, '1.0.0');
    assert.deepEqual(
      refused.map((r) => r.version),
      ['1.1.0'],
    );
    assert.match(refused[0]?.reason ?? '', /1\.1\.0\.json/);
  });

  it('none shipped fails the start naming SIGNALS_NAME', async () => {
    await assert.rejects(
      shippedSignals(dir, 'other', () => undefined),
      (e) => e instanceof AppError && e.code === 'config_invalid' && e.errors[0]?.path === 'SIGNALS_NAME',
    );
  });
});

describe('what serves reads of the signals', () => {
  const manifest = (version: string, names: string[]) =>
    ({ name: 'fraud', version, features: names.map((name) => ({ name, definition: '' })) }) as unknown as ModelManifest;

  it('names each served model version once and each ruleset that reads signals', () => {
    const a = manifest('1.0.0', ['amount_log']);
    const all = allRequirements(
      () => modelRequirements([a, undefined, a, manifest('1.1.0', ['amount_log', 'card_users_1h'])]),
      () =>
        rulesetRequirements([
          { name: 'fraud-rules', version: '1.0.0', signalsUsed: [] },
          { name: 'fraud-rules', version: '1.1.0', signalsUsed: ['card_users_1h'] },
          undefined,
        ]),
    );
    assert.deepEqual(all(), [
      { who: 'model fraud 1.0.0', names: ['amount_log'] },
      { who: 'model fraud 1.1.0', names: ['amount_log', 'card_users_1h'] },
      { who: 'ruleset fraud-rules 1.1.0', names: ['card_users_1h'] },
    ]);
  });
});
