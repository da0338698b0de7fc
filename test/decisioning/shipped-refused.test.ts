/** A ruleset version that does not validate, left in the rulesets folder, never stops `npm start`. */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { stopChild } from '../support/child-process';
import { validEvent } from '../support/events';
import { startLocalHost } from '../support/local-host';

const SHIPPED = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');
let dir: string;

before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'shipped-refused-'));
  const shipped = JSON.parse(await fs.readFile(SHIPPED, 'utf8')) as { rules: unknown[] };
  await fs.mkdir(path.join(dir, 'fraud-rules'));
  await fs.writeFile(path.join(dir, 'fraud-rules', '1.0.0.json'), JSON.stringify(shipped));
  const broken = {
    ...shipped,
    version: '1.1.0',
    rules: [...shipped.rules, { id: 'bad', when: 'event.amount >', action: 'block' }],
  };
  await fs.writeFile(path.join(dir, 'fraud-rules', '1.1.0.json'), JSON.stringify(broken));
});
after(() => fs.rm(dir, { recursive: true, force: true }));

describe('a refused shipped ruleset version', () => {
  it('is reported, naming version, file, rule and column, and the next lower version serves', async () => {
    const host = await startLocalHost({ set: { RULESET_DIR: dir, CASE_STORE: 'none' }, ms: 120_000 });
    try {
      const res = await fetch(`${host.url}/score`, {
        method: 'POST',
        headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' },
        body: JSON.stringify(validEvent()),
      });
      assert.equal(res.status, 200);
      assert.equal(res.headers.get('x-ruleset-version'), '1.0.0');
      const out = host.output();
      assert.match(out, /shipped ruleset version refused/);
      assert.match(
        out,
        /fraud-rules 1\.1\.0 \([^)]*fraud-rules\/1\.1\.0\.json\) does not compile: rule bad \(rules\.\d+\.when, column 15\)/,
      );
    } finally {
      await stopChild(host.child, 'the host');
    }
  });
});
