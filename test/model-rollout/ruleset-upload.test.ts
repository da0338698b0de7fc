/**
 * The embedded default (no Redis, no storage account) as `npm start` runs it: the models folder plays the container,
 * and the local host feeds every blob trigger by its declared path, as Event Grid does in Azure. A ruleset file
 * copied to `{models}/rulesets/fraud-rules/{version}.json` rolls out; an invalid one is refused, named, and the
 * previous version keeps serving.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { RulesetStatus } from '../../lib/decisioning/ruleset-rollout';
import { servedRulesetVersion, startEmbeddedRollout, type EmbeddedRollout } from './support/embedded-rollout';
import { eventually } from './support/eventually';

const SHIPPED = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');
let rollout: EmbeddedRollout;

const rulesetVersion = (): Promise<string | null> => servedRulesetVersion(rollout);

/** Writes a ruleset document where an upload lands: `{models}/rulesets/fraud-rules/{version}.json`. */
async function upload(doc: Record<string, unknown>): Promise<void> {
  const dir = path.join(rollout.folder.dir, 'rulesets', 'fraud-rules');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, `${String(doc['version'])}.json`), JSON.stringify(doc));
}

before(async () => {
  rollout = await startEmbeddedRollout();
});
after(() => rollout.dispose());

describe('a ruleset upload on embedded defaults', () => {
  it('a new version copied into the models folder serves; an invalid one is refused, named, and changes nothing', async () => {
    const shipped = JSON.parse(await fs.readFile(SHIPPED, 'utf8')) as Record<string, unknown>;
    assert.equal(await rulesetVersion(), shipped['version']);
    await upload({ ...shipped, version: '1.1.0' });
    await eventually(rulesetVersion, (v) => v === '1.1.0', 'responses to carry ruleset 1.1.0', 30_000);

    const rules = [...(shipped['rules'] as unknown[]), { id: 'broken', when: 'event.amount >', action: 'block' }];
    await upload({ ...shipped, version: '1.2.0', rules });
    const status = await eventually(
      async () => (await (await fetch(`${rollout.api}/rulesets/fraud-rules`)).json()) as RulesetStatus,
      (s) => s.rejections.some((r) => r.version === '1.2.0'),
      'the rejection of 1.2.0 to be recorded',
      30_000,
    );
    const rejection = status.rejections.find((r) => r.version === '1.2.0');
    assert.match(rejection?.reason ?? '', /fraud-rules 1\.2\.0.*rulesets\/fraud-rules\/1\.2\.0\.json.*rule broken/);
    assert.ok(rejection?.errors.some((e) => e.rule === 'broken' && e.column === 15));
    assert.equal(await rulesetVersion(), '1.1.0', 'the previous version keeps serving');
  });
});
