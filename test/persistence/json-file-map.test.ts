import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { JSON_FILE_MAP_MAX_ENTRIES, JsonFileMap } from '../../lib/persistence/json-file-map';

let dir: string;
before(async () => {
  dir = await fs.mkdtemp(path.join(os.tmpdir(), 'json-file-map-'));
});
after(() => fs.rm(dir, { recursive: true, force: true }));

describe('JsonFileMap', () => {
  it('keeps what was set across a reopen, in a folder it creates', () => {
    const file = path.join(dir, 'nested', 'pointers.json');
    const a = new JsonFileMap<{ v: number }>(file);
    assert.equal(a.get('fraud'), undefined);
    a.set('fraud', { v: 1 });
    a.set('fraud', { v: 2 });
    a.set('other', { v: 3 });
    const b = new JsonFileMap<{ v: number }>(file);
    assert.deepEqual(
      [...b.entries()],
      [
        ['fraud', { v: 2 }],
        ['other', { v: 3 }],
      ],
    );
  });

  it('opens empty and says why when the file is not a JSON object; the next set rewrites it', async () => {
    const file = path.join(dir, 'broken.json');
    await fs.writeFile(file, '[1, 2');
    const errors: string[] = [];
    const m = new JsonFileMap<number>(file, (e) => errors.push(e));
    assert.equal([...m.entries()].length, 0);
    assert.match(errors[0] ?? '', /broken\.json is not a JSON object/);
    m.set('a', 1);
    assert.deepEqual(JSON.parse(await fs.readFile(file, 'utf8')), { a: 1 });
  });

  it('is bounded: a new key beyond the limit is refused, an existing one still changes', () => {
    const m = new JsonFileMap<number>(path.join(dir, 'full.json'));
    for (let i = 0; i < JSON_FILE_MAP_MAX_ENTRIES; i++) m.set(`k${i}`, i);
    assert.equal(m.set('one-more', 1), false);
    assert.equal(m.get('one-more'), undefined);
    assert.equal(m.set('k0', 42), true);
    assert.equal(m.get('k0'), 42);
  });
});
