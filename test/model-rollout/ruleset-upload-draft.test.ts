/**
 * `RULESET_DIRECT_ROLLOUT=false` (the Azure deployment's setting) on embedded defaults with the case database on
 * PGlite: a ruleset uploaded to blob becomes a draft by `blob-upload` and never serves; its promote is 409
 * `draft_not_approved` until another lead approves it (docs/governance.md).
 */
import assert from 'node:assert/strict';
import { promises as fs, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { servedRulesetVersion, startEmbeddedRollout, type EmbeddedRollout } from './support/embedded-rollout';
import { eventually } from './support/eventually';

const SHIPPED = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');
const pglite = mkdtempSync(path.join(tmpdir(), 'test-upload-draft-'));
let rollout: EmbeddedRollout;

const rulesetVersion = (): Promise<string | null> => servedRulesetVersion(rollout);

before(async () => {
  rollout = await startEmbeddedRollout({
    RULESET_DIRECT_ROLLOUT: 'false',
    CASE_STORE: 'pglite',
    PGLITE_DIR: pglite,
    IDENTITY_MODE: 'development',
  });
});
after(async () => {
  await rollout.dispose();
  rmSync(pglite, { recursive: true, force: true });
});

describe('a ruleset upload with RULESET_DIRECT_ROLLOUT=false', () => {
  it('becomes a draft by blob-upload, never serves, and its promote is 409 until approved', async () => {
    const shipped = JSON.parse(await fs.readFile(SHIPPED, 'utf8')) as Record<string, unknown>;
    const dir = path.join(rollout.folder.dir, 'rulesets', 'fraud-rules');
    await fs.mkdir(dir, { recursive: true });
    await fs.writeFile(path.join(dir, '1.1.0.json'), JSON.stringify({ ...shipped, version: '1.1.0' }));
    const { drafts } = await eventually(
      async () =>
        (await (await fetch(`${rollout.api}/rulesets/fraud-rules/drafts`)).json()) as {
          drafts: { version: string; author: string; state: string }[];
        },
      (b) => Array.isArray(b.drafts) && b.drafts.length > 0,
      'the upload to become a draft',
      30_000,
    );
    assert.deepEqual(
      drafts.map((d) => [d.version, d.author, d.state]),
      [['1.1.0', 'blob-upload', 'draft']],
    );
    assert.equal(await rulesetVersion(), '1.0.0', 'the draft does not serve');
    const res = await fetch(`${rollout.api}/rulesets/fraud-rules/promote`, {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ version: '1.1.0' }),
    });
    assert.equal(res.status, 409);
    assert.equal(((await res.json()) as { code: string }).code, 'draft_not_approved');
    assert.equal(await rulesetVersion(), '1.0.0', 'nothing changed');
  });
});
