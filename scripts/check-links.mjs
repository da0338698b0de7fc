// `npm run docs:links [-- <root>]`: checks every relative link and anchor between the repository's Markdown files
// (the *.md files at the root and under docs/), offline, with remark-validate-links (through remark-cli).
// Exits 1 and names each broken link or anchor. test/docs/links.test.ts runs it on the repository and on a
// copy with a broken link. Plain JavaScript on purpose: remark is ESM-only, and this runs before any build.
import { spawnSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const here = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const root = path.resolve(process.argv[2] ?? here);
const cli = path.join(here, 'node_modules', 'remark-cli', 'cli.js');
const plugin = fileURLToPath(import.meta.resolve('remark-validate-links'));

const md = (dir) =>
  existsSync(dir)
    ? readdirSync(dir, { withFileTypes: true })
        .filter((e) => e.isFile() && e.name.endsWith('.md'))
        .map((e) => path.relative(root, path.join(dir, e.name)))
    : [];
const files = [...md(root), ...md(path.join(root, 'docs'))].sort();

// repository:false: resolve links against the files only (no Git remote, no network)
const r = spawnSync(
  process.execPath,
  [
    cli,
    '--no-stdout',
    '--frail',
    '--quiet',
    '--no-color',
    '--no-config',
    '--no-ignore',
    '--use',
    `${plugin}=repository:false`,
    ...files,
  ],
  { cwd: root, encoding: 'utf8' },
);
process.stderr.write(r.stderr ?? '');
if (r.status !== 0) process.stderr.write(`broken links or anchors in ${files.length} Markdown files (see above)\n`);
else process.stdout.write(`links: ${files.length} Markdown files, no broken link or anchor\n`);
process.exit(r.status ?? 1);
