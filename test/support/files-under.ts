import { readdirSync } from 'node:fs';
import * as path from 'node:path';

/** Every file under `dir`, recursively, whose name `keep` accepts (absolute paths). */
export function filesUnder(dir: string, keep: (name: string) => boolean): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) => {
    const p = path.join(dir, e.name);
    if (e.isDirectory()) return filesUnder(p, keep);
    return keep(e.name) ? [p] : [];
  });
}
