/**
 * What the container images ship can load. The Dockerfiles prune dev dependencies (`npm prune --omit=dev`)
 * and delete `dist/test`, `dist/bench` and `dist/local` before copying `dist` into the Functions image, and
 * no Docker engine runs here to try the image. So this test reads the compiled code the image runs
 * (`dist/lib`, `dist/functions`, whose `require` calls are what Node loads) and fails naming any module that
 * would be missing there: a package that is not a production dependency, or a file under a deleted folder.
 */
import assert from 'node:assert/strict';
import { builtinModules } from 'node:module';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { filesUnder } from '../support/files-under';

const ROOT = path.resolve(__dirname, '../../..');
const DIST = path.join(ROOT, 'dist');
/** Folders the Dockerfiles delete from `dist` before the runtime stage copies it. */
const DELETED = ['test', 'bench', 'local'];
/** Provided by the Functions Node worker itself, not by npm (loaded in a try/catch). */
const WORKER_PROVIDED = new Set(['@azure/functions-core']);

/** Every `.js` file under `dir`, recursively. */
const jsFiles = (dir: string): string[] => filesUnder(dir, (n) => n.endsWith('.js'));

/** The string arguments of the `require(...)` calls in compiled CommonJS. */
function requires(js: string): string[] {
  return [...js.matchAll(/\brequire\(\s*(["'])([^"']+)\1\s*\)/g)].map((m) => m[2] as string);
}

/** The npm package a bare specifier names (`@scope/name/sub` → `@scope/name`). */
function packageOf(specifier: string): string {
  const parts = specifier.split('/');
  return (specifier.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

const isBuiltin = (s: string): boolean => s.startsWith('node:') || builtinModules.includes(packageOf(s));

describe('container image contents', () => {
  it('reads require calls and package names', () => {
    const js = 'const a = require("zod");\nconst b = require(\'./x\');\nconst c = require("@azure/identity/sub");';
    assert.deepEqual(requires(js), ['zod', './x', '@azure/identity/sub']);
    assert.equal(packageOf('@azure/identity/sub'), '@azure/identity');
    assert.equal(packageOf('lru-cache'), 'lru-cache');
    assert.ok(isBuiltin('node:fs') && isBuiltin('worker_threads') && !isBuiltin('zod'));
  });

  it('the Dockerfiles prune dev dependencies and delete the folders this test assumes', () => {
    for (const file of ['Dockerfile', 'Dockerfile.gpu']) {
      const text = readFileSync(path.join(ROOT, file), 'utf8');
      assert.match(text, /npm prune --omit=dev/, `${file} prunes dev dependencies`);
      assert.match(text, /rm -rf dist\/test dist\/bench dist\/local/, `${file} deletes dist/test, bench, local`);
      assert.match(text, /COPY --from=build \/src\/dist \.\/dist/, `${file} ships dist`);
      // the shipped versions the app serves when no pointer names another
      for (const folder of ['models', 'rulesets', 'signals'])
        assert.match(text, new RegExp(`COPY --from=build /src/${folder} ./${folder}`), `${file} ships ${folder}/`);
    }
  });

  it('BUNDLE_SEED_MODEL=false ships no model; the default keeps the committed model without training', () => {
    for (const file of ['Dockerfile', 'Dockerfile.gpu']) {
      const lines = readFileSync(path.join(ROOT, file), 'utf8').split('\n');
      const start = lines.findIndex((l) => l.startsWith('RUN ') && l.includes('BUNDLE_SEED_MODEL'));
      assert.ok(start >= 0, `${file} has a RUN step on BUNDLE_SEED_MODEL`);
      const step: string[] = [];
      for (let i = start; i < lines.length; i++) {
        step.push(lines[i] as string);
        if (!(lines[i] as string).endsWith('\\')) break;
      }
      const script = step.join('\n').replace(/^RUN /, '');
      for (const [bundle, expected] of [
        ['false', []],
        ['true', ['1.0.0.onnx']],
      ] as const) {
        const dir = mkdtempSync(path.join(tmpdir(), 'seed-model-'));
        try {
          mkdirSync(path.join(dir, 'models', 'fraud'), { recursive: true });
          writeFileSync(path.join(dir, 'models', 'fraud', '1.0.0.onnx'), 'committed model');
          // `node` is replaced by `false`: the step must not train when the committed model is there
          const r = spawnSync('sh', ['-c', script.replace(/\bnode dist\//, 'false dist/')], {
            cwd: dir,
            env: { PATH: process.env['PATH'] ?? '', BUNDLE_SEED_MODEL: bundle },
            encoding: 'utf8',
          });
          assert.equal(r.status, 0, `${file} BUNDLE_SEED_MODEL=${bundle}: ${r.stderr}`);
          assert.ok(existsSync(path.join(dir, 'models')), `${file}: models/ exists (the runtime stage copies it)`);
          const fraud = path.join(dir, 'models', 'fraud');
          assert.deepEqual(
            existsSync(fraud) ? readdirSync(fraud) : [],
            expected,
            `${file} BUNDLE_SEED_MODEL=${bundle}`,
          );
        } finally {
          rmSync(dir, { recursive: true, force: true });
        }
      }
    }
  });

  it('every module the shipped code requires is in the image', () => {
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as {
      dependencies: Record<string, string>;
    };
    const production = new Set(Object.keys(pkg.dependencies));
    const shipped = ['lib', 'functions'].flatMap((d) => jsFiles(path.join(DIST, d)));
    assert.ok(shipped.length > 100, `expected the compiled service under ${DIST}, found ${shipped.length} files`);
    const missing: string[] = [];
    for (const file of shipped) {
      const where = path.relative(ROOT, file);
      for (const spec of requires(readFileSync(file, 'utf8'))) {
        if (spec.startsWith('.')) {
          const target = path.relative(DIST, path.resolve(path.dirname(file), spec));
          const top = target.split(path.sep)[0] ?? '';
          if (DELETED.includes(top)) missing.push(`${where} requires ${spec}: dist/${top} is deleted from the image`);
        } else if (!isBuiltin(spec) && !WORKER_PROVIDED.has(spec) && !production.has(packageOf(spec))) {
          missing.push(`${where} requires ${spec}: not a production dependency (npm prune --omit=dev drops it)`);
        }
      }
    }
    assert.deepEqual(missing, []);
  });
});
