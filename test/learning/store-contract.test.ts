/**
 * One contract for every learning store: the local folder and Blob Storage (append blobs, against Azurite on a
 * free port). Each suite runs the same cases on a fresh store.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { BlobLearningStore } from '../../lib/learning/blob-store';
import { FolderLearningStore } from '../../lib/learning/folder-store';
import type { LearningStore } from '../../lib/learning/learning-store';
import { startAzurite, type Azurite } from '../model-rollout/support/azurite';

function contract(name: string, make: () => Promise<LearningStore>): void {
  describe(`learning store contract: ${name}`, () => {
    it('append creates, then appends whole lines in order', async () => {
      const s = await make();
      await s.append('decisions/2026/12/01/21/a.jsonl', '{"n":1}\n');
      await s.append('decisions/2026/12/01/21/a.jsonl', '{"n":2}\n{"n":3}\n');
      assert.equal(await s.read('decisions/2026/12/01/21/a.jsonl'), '{"n":1}\n{"n":2}\n{"n":3}\n');
    });

    it('createIfAbsent creates once; a second call changes nothing', async () => {
      const s = await make();
      assert.equal(await s.createIfAbsent('labels/ab/abc.json', 'first\n'), true);
      assert.equal(await s.createIfAbsent('labels/ab/abc.json', 'second\n'), false);
      assert.equal(await s.read('labels/ab/abc.json'), 'first\n');
    });

    it('lists names under a prefix, sorted, and nothing else', async () => {
      const s = await make();
      await s.append('decisions/2026/12/01/22/b.jsonl', 'x\n');
      await s.append('decisions/2026/12/01/21/b.jsonl', 'x\n');
      await s.createIfAbsent('labels/00/l.json', 'x\n');
      assert.deepEqual(await s.list('decisions/2026/12/01/21/'), ['decisions/2026/12/01/21/b.jsonl']);
      assert.deepEqual(await s.list('decisions/'), [
        'decisions/2026/12/01/21/b.jsonl',
        'decisions/2026/12/01/22/b.jsonl',
      ]);
      assert.deepEqual(await s.list('nothing/'), []);
    });

    it('read answers undefined for an absent name', async () => {
      assert.equal(await (await make()).read('decisions/none.jsonl'), undefined);
    });

    it('replace rewrites, an empty text deletes, and append works again after', async () => {
      const s = await make();
      await s.append('decisions/2026/12/01/21/c.jsonl', 'a\nb\n');
      await s.replace('decisions/2026/12/01/21/c.jsonl', 'b\n');
      assert.equal(await s.read('decisions/2026/12/01/21/c.jsonl'), 'b\n');
      await s.replace('decisions/2026/12/01/21/c.jsonl', '');
      assert.equal(await s.read('decisions/2026/12/01/21/c.jsonl'), undefined);
      await s.append('decisions/2026/12/01/21/c.jsonl', 'c\n');
      assert.equal(await s.read('decisions/2026/12/01/21/c.jsonl'), 'c\n');
    });
  });
}

const dirs: string[] = [];
contract('folder', async () => {
  const dir = await fs.mkdtemp(path.join(os.tmpdir(), 'learning-store-'));
  dirs.push(dir);
  return new FolderLearningStore(dir);
});
after(() => Promise.all(dirs.map((d) => fs.rm(d, { recursive: true, force: true }))));

let azurite: Azurite;
let n = 0;
before(async () => {
  azurite = await startAzurite();
});
after(() => azurite.stop());
contract('blob (Azurite, append blobs)', () =>
  Promise.resolve(
    BlobLearningStore.create({
      connectionString: azurite.connectionString,
      blobServiceUri: undefined,
      clientId: undefined,
      container: `decisions-${n++}`,
    }),
  ),
);
