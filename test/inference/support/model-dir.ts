import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { writeRandomModel, type RandomModelOptions } from '../../../lib/training/random-model';

/**
 * A throw-away models folder holding one generated `fraud@1.0.0` model. Lives under `dist/` (not the
 * system temp dir) so nothing outside the build can clean it mid-test. Call `remove()` when done.
 */
export async function tempModelDir(opts: RandomModelOptions): Promise<{ dir: string; remove: () => Promise<void> }> {
  const root = path.join(__dirname, '..', '..', '..', '.test-tmp');
  await fs.mkdir(root, { recursive: true });
  const dir = await fs.mkdtemp(path.join(root, 'models-'));
  await writeRandomModel(dir, opts);
  return { dir, remove: () => fs.rm(dir, { recursive: true, force: true }) };
}
