/**
 * Every relative link and anchor between the repository's Markdown files resolves (`scripts/check-links.mjs`:
 * remark-validate-links, offline). The checker is also run on a copy with a broken file link and a broken anchor,
 * so this test can fail.
 */
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { mkdtempSync, mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';

const ROOT = path.resolve(__dirname, '../../..');
const SCRIPT = path.join(ROOT, 'scripts', 'check-links.mjs');

function check(root: string): { status: number | null; output: string } {
  const r = spawnSync(process.execPath, [SCRIPT, root], { encoding: 'utf8', timeout: 120_000 });
  return { status: r.status, output: `${r.stdout}${r.stderr}` };
}

describe('Markdown links', () => {
  it('every relative link and anchor in README.md, the root pages and docs/ resolves', () => {
    const r = check(ROOT);
    assert.equal(r.status, 0, `broken links (run \`npm run docs:links\`):\n${r.output}`);
  });

  it('the checker fails on a missing file, a missing heading in another page, and a missing local heading', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'links-'));
    try {
      mkdirSync(path.join(dir, 'docs'));
      writeFileSync(
        path.join(dir, 'README.md'),
        '# Front\n\n## Two words\n\n[ok](docs/page.md#a-heading) [ok](#two-words)\n[gone](docs/missing.md) [bad](docs/page.md#no-such-heading) [bad](#nowhere)\n',
      );
      writeFileSync(path.join(dir, 'docs', 'page.md'), '# Page\n\n## A heading\n\n[back](../README.md#front)\n');
      const r = check(dir);
      assert.equal(r.status, 1, r.output);
      assert.match(r.output, /docs\/missing\.md/);
      assert.match(r.output, /#no-such-heading/);
      assert.match(r.output, /#nowhere/);
      assert.doesNotMatch(r.output, /#a-heading|#two-words|#front/, 'valid links are not reported');
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});
