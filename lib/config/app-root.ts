import * as fs from 'node:fs';
import * as path from 'node:path';

let cached: string | undefined;

/** The app's root folder: the nearest ancestor of this module holding `package.json` (the Functions app root). */
export function appRoot(): string {
  if (cached !== undefined) return cached;
  let dir = __dirname;
  while (!fs.existsSync(path.join(dir, 'package.json'))) {
    const parent = path.dirname(dir);
    if (parent === dir) return (cached = process.cwd());
    dir = parent;
  }
  return (cached = dir);
}
