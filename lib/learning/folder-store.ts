import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import type { LearningStore } from './learning-store';

/** The learning store in a local folder (`DECISION_LOG_DIR`, `npm start`): names are relative paths. */
export class FolderLearningStore implements LearningStore {
  constructor(private readonly root: string) {}

  private file(name: string): string {
    const f = path.resolve(this.root, name);
    if (!f.startsWith(path.resolve(this.root) + path.sep)) throw new Error('name outside the store');
    return f;
  }

  async append(name: string, text: string): Promise<void> {
    const f = this.file(name);
    await fs.mkdir(path.dirname(f), { recursive: true });
    await fs.appendFile(f, text);
  }

  async createIfAbsent(name: string, text: string): Promise<boolean> {
    const f = this.file(name);
    await fs.mkdir(path.dirname(f), { recursive: true });
    try {
      await fs.writeFile(f, text, { flag: 'wx' });
      return true;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
      throw err;
    }
  }

  async list(prefix: string): Promise<string[]> {
    const folder = prefix.slice(0, prefix.lastIndexOf('/') + 1);
    const out: string[] = [];
    const walk = async (d: string): Promise<void> => {
      let entries: import('node:fs').Dirent[];
      try {
        entries = await fs.readdir(d, { withFileTypes: true });
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
        throw err;
      }
      for (const e of entries) {
        const p = path.join(d, e.name);
        if (e.isDirectory()) await walk(p);
        else if (!e.name.endsWith('.tmp')) out.push(path.relative(this.root, p).split(path.sep).join('/'));
      }
    };
    await walk(path.join(this.root, folder));
    return out.filter((n) => n.startsWith(prefix)).sort();
  }

  async read(name: string): Promise<string | undefined> {
    try {
      return await fs.readFile(this.file(name), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
      throw err;
    }
  }

  async replace(name: string, text: string): Promise<void> {
    const f = this.file(name);
    if (text === '') return fs.rm(f, { force: true });
    const tmp = `${f}.${process.pid}.tmp`;
    await fs.writeFile(tmp, text);
    await fs.rename(tmp, f); // atomic: a reader sees the old or the new text, never half
  }

  dispose(): Promise<void> {
    return Promise.resolve();
  }
}
