/**
 * The shipped model version of a models folder: the pin (`MODEL_VERSION`) first, then the folder's `shipped.json`,
 * and the newest version only for a folder without that file; a bad `shipped.json` fails naming the file.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { FEATURE_NAMES } from '../../lib/features/featurizer';
import { ModelFolder } from '../../lib/models/model-folder';
import { ShippedModelSource, shippedVersion } from '../../lib/model-rollout/shipped-model';
import { bundledBytes, copyBundled, manifestFor, writeFolderModel } from './support/models';

let folder: Awaited<ReturnType<typeof copyBundled>>;
const source = (version?: string): ShippedModelSource =>
  new ShippedModelSource(new ModelFolder(folder.dir, 'fraud', version, FEATURE_NAMES), FEATURE_NAMES);
const loaded = async (s: ShippedModelSource): Promise<string> => (await s.load()).manifest.version;

before(async () => {
  folder = await copyBundled();
  const bytes = await bundledBytes();
  for (const v of ['1.1.0', '1.2.0']) await writeFolderModel(folder.dir, v, bytes, await manifestFor(v, bytes));
});
after(() => folder.remove());

describe('the shipped model version', () => {
  it('is the one shipped.json names, not the newest file; a pin wins', async () => {
    assert.equal(await shippedVersion(folder.dir, 'fraud'), '1.0.0');
    assert.equal(await loaded(source()), '1.0.0');
    assert.equal(await loaded(source('1.1.0')), '1.1.0');
  });

  it('is the newest version of a folder without shipped.json, or whose shipped.json does not name the model', async () => {
    await fs.writeFile(path.join(folder.dir, 'shipped.json'), '{ "other": "2.0.0" }');
    assert.equal(await loaded(source()), '1.2.0');
    await fs.rm(path.join(folder.dir, 'shipped.json'));
    assert.equal(await shippedVersion(folder.dir, 'fraud'), undefined);
    assert.equal(await loaded(source()), '1.2.0');
  });

  it('fails naming the file when shipped.json is not a map of names to versions', async () => {
    for (const text of ['not json', '["1.0.0"]', '{ "fraud": "latest" }', '{ "fraud": 1 }']) {
      await fs.writeFile(path.join(folder.dir, 'shipped.json'), text);
      await assert.rejects(source().load(), (err: Error & { code?: string }) => {
        assert.equal(err.code, 'config_invalid', text);
        assert.match(err.message, /shipped\.json/);
        return true;
      });
    }
  });
});
