/**
 * The shipped signals: `signals/{name}/{version}.json` at the app root (beside `models/` and `rulesets/`),
 * `default` 1.0.0 being the shipped model's 17 features as builtins. Read and compiled once, at start.
 * @module
 */
import { readdirSync, readFileSync } from 'node:fs';
import { readdir, readFile } from 'node:fs/promises';
import * as path from 'node:path';
import { appRoot } from '../config/app-root';
import { AppError } from '../errors/errors';
import { compareVersions } from '../models/model-folder';
import { compileSignals } from './compile-signals';
import type { CompiledSignals } from './compiled-signals';
import { MAX_SIGNALS_BYTES, SIGNALS_NAME_RE, SIGNALS_VERSION_RE } from './signals-document';

/** The shipped signals document's name. */
export const SHIPPED_SIGNALS_NAME = 'default';

/** The folder of the shipped signals documents (`{name}/{version}.json`): `signals/` at the app root. */
export const shippedSignalsDir = (): string => path.join(appRoot(), 'signals');

/**
 * Parses and compiles a signals document's text.
 * @param source where the text came from (a file or a blob), named in a rejection.
 * @throws AppError `signals_invalid` (too large, bad JSON, or what {@link compileSignals} refuses).
 */
export function loadSignals(text: string, source?: string): CompiledSignals {
  const from = source === undefined ? '' : ` (${source})`;
  if (Buffer.byteLength(text) > MAX_SIGNALS_BYTES)
    throw new AppError('signals_invalid', `The signals document${from} is over ${MAX_SIGNALS_BYTES} bytes.`, {
      errors: [{ path: '', message: `at most ${MAX_SIGNALS_BYTES} bytes` }],
    });
  let value: unknown;
  try {
    value = JSON.parse(text) as unknown;
  } catch {
    throw new AppError('signals_invalid', `The signals document${from} is not valid JSON.`, {
      errors: [{ path: '', message: 'malformed JSON' }],
    });
  }
  try {
    return compileSignals(value);
  } catch (err) {
    if (!(err instanceof AppError) || source === undefined) throw err;
    throw new AppError('signals_invalid', err.message.replace(/ is invalid:/, `${from} is invalid:`), {
      errors: err.errors,
      cause: err,
    });
  }
}

/** Where to find a shipped version: `dir` (default {@link shippedSignalsDir}), `name`, `version` (default newest). */
export interface ShippedSignalsOptions {
  readonly dir?: string;
  readonly name?: string;
  readonly version?: string;
}

function newest(dir: string, name: string, files: readonly string[]): string {
  const versions = files
    .filter((f) => f.endsWith('.json') && SIGNALS_VERSION_RE.test(f.slice(0, -5)))
    .map((f) => f.slice(0, -5))
    .sort(compareVersions);
  const last = versions.at(-1);
  if (last === undefined) throw new AppError('not_found', `No signals version in ${path.join(dir, name)}.`);
  return last;
}

function fileOf(dir: string, name: string, version: string): string {
  if (!SIGNALS_NAME_RE.test(name) || !SIGNALS_VERSION_RE.test(version))
    throw new AppError('not_found', 'No such signals version.');
  return path.join(dir, name, `${version}.json`);
}

/**
 * Reads and compiles a shipped signals version (the newest of `name` unless `version` is given).
 * @throws AppError `not_found` (no such file), `signals_invalid`.
 */
export async function loadShippedSignals(options: ShippedSignalsOptions = {}): Promise<CompiledSignals> {
  const dir = options.dir ?? shippedSignalsDir();
  const name = options.name ?? SHIPPED_SIGNALS_NAME;
  const version = options.version ?? newest(dir, name, await readdir(path.join(dir, name)).catch(() => [] as string[]));
  const file = fileOf(dir, name, version);
  const text = await readFile(file, 'utf8').catch(() => undefined);
  if (text === undefined) throw new AppError('not_found', `No signals ${name} ${version} in ${dir}.`);
  return loadSignals(text, file);
}

/** {@link loadShippedSignals}, synchronously (start-up, scripts and tests). */
export function loadShippedSignalsSync(options: ShippedSignalsOptions = {}): CompiledSignals {
  const dir = options.dir ?? shippedSignalsDir();
  const name = options.name ?? SHIPPED_SIGNALS_NAME;
  let files: string[] = [];
  try {
    files = readdirSync(path.join(dir, name));
  } catch {
    /* no folder: no version */
  }
  const version = options.version ?? newest(dir, name, files);
  const file = fileOf(dir, name, version);
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch {
    throw new AppError('not_found', `No signals ${name} ${version} in ${dir}.`);
  }
  return loadSignals(text, file);
}
