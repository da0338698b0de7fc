/**
 * What the signals kind checks of a document (`lib/rollout/document-kind.ts` does the rest of an upload): the compile
 * (`compileSignals`: schema, expressions, references, each refusal naming its field), the document's name and version
 * against its path, and compatibility: the version must compute every signal that what serves reads (the serving
 * ruleset's `signals.<name>`, the serving model versions' input features), else it is refused naming who needs what.
 * @module
 */
import { AppError, type FieldError } from '../errors/errors';
import type { CompiledSignals } from './compiled-signals';
import { loadSignals } from './shipped-signals';

/** What something that serves reads from a signals version: e.g. `ruleset fraud-rules 1.1.0` reads `card_users_1h`. */
export interface SignalsRequirement {
  /** Who reads them, as a refusal names it (never payment data). */
  readonly who: string;
  readonly names: readonly string[];
}

/** What serves now and the signals it reads (the serving ruleset, the serving model versions). */
export type SignalsRequirements = () => readonly SignalsRequirement[];

/**
 * Refuses a version that lacks a signal something serving reads.
 * @throws AppError `signals_invalid`, one error per missing signal (`signals.<name>`, naming who reads it).
 */
export function checkCompatible(signals: CompiledSignals, requirements: readonly SignalsRequirement[]): void {
  const errors: FieldError[] = [];
  const lacking: string[] = [];
  for (const r of requirements) {
    const missing = [...new Set(r.names)].filter((n) => signals.indexOf(n) === undefined);
    if (missing.length === 0) continue;
    lacking.push(`${r.who} reads ${missing.join(', ')}`);
    for (const n of missing) errors.push({ path: `signals.${n}`, message: `${r.who} reads it` });
  }
  if (errors.length > 0)
    throw new AppError(
      'signals_invalid',
      `Signals ${signals.name} ${signals.version} lacks signals that serve: ${lacking.join('; ')}.`,
      { errors },
    );
}

/**
 * Compiles a document's text read from `source` ({@link loadSignals}: size, JSON, compile), checking that it is the
 * version `name`/`version` names.
 * @throws AppError `signals_invalid` naming every invalid field (the path's name and version as `name`, `version`).
 */
export function compileSignalsText(text: string, name: string, version: string, source: string): CompiledSignals {
  const signals = loadSignals(text, source.slice(0, 256));
  const errors: FieldError[] = [];
  if (signals.name !== name) errors.push({ path: 'name', message: `the path says ${name}` });
  if (signals.version !== version) errors.push({ path: 'version', message: `the path says ${version}` });
  if (errors.length > 0)
    throw new AppError('signals_invalid', `The document name and version must match its path (${name} ${version}).`, {
      errors,
    });
  return signals;
}
