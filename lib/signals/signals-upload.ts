/**
 * The signals kind of the upload pipeline (`lib/pointer/upload-pipeline.ts`): what differs for signals documents.
 * The path is `features/{name}/{version}.json`; validation is the compile (`compileSignals`: schema, expressions,
 * references, each refusal naming its field), the document's name and version against its path, and compatibility:
 * the version must compute every signal that what serves reads (the serving ruleset's `signals.<name>`, the serving
 * model versions' input features), else it is refused naming who needs what. Publication makes the version the
 * pointer's active one (the version served before it is kept for rollback).
 * @module
 */
import { AppError, type FieldError } from '../errors/errors';
import type { PointerStore } from '../pointer/pointer-store';
import { UploadRefused, type ArtifactBytes, type ArtifactKind, type Published } from '../pointer/upload-pipeline';
import type { VersionState } from '../pointer/version-traffic';
import type { CompiledSignals } from './compiled-signals';
import { MAX_SIGNALS_BYTES } from './signals-document';
import { parseSignalsPath, type SignalsRepository } from './signals-repository';
import { loadSignals } from './shipped-signals';
import { EMPTY_SIGNALS_STATE, SIGNALS_TRAFFIC } from './signals-traffic';

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

/** Dependencies of a {@link SignalsKind}. */
export interface SignalsKindDeps {
  /** The signals document this app serves (`SIGNALS_NAME`). */
  readonly name: string;
  readonly store: PointerStore<VersionState>;
  readonly repository: SignalsRepository;
  /** The version this instance serves (the shipped one until a pointer names another). */
  readonly serving: () => string | undefined;
  readonly requirements: SignalsRequirements;
  /** Keeps a validated version, so that this instance swaps without compiling it again. */
  readonly keep: (signals: CompiledSignals) => void;
}

/** Signals documents, as the upload pipeline sees them. */
export class SignalsKind implements ArtifactKind<CompiledSignals> {
  readonly kind = 'signals';
  readonly maxBytes = MAX_SIGNALS_BYTES;
  constructor(private readonly deps: SignalsKindDeps) {}

  get name(): string {
    return this.deps.name;
  }

  parsePath(blobPath: string): { name: string; version: string } {
    const ref = parseSignalsPath(blobPath);
    if (ref === undefined)
      throw new UploadRefused(
        'blobPath',
        new AppError('signals_invalid', `${blobPath.slice(0, 256)} is not features/{name}/{version}.json.`, {
          errors: [{ path: 'blobPath', message: 'must be features/{name}/{version}.json with a version like 1.1.0' }],
        }),
      );
    if (ref.name !== this.deps.name)
      throw new UploadRefused(
        'name',
        new AppError('signals_invalid', `This app serves signals "${this.deps.name}", not "${ref.name}".`, {
          errors: [{ path: 'name', message: `must be ${this.deps.name}` }],
        }),
      );
    return ref;
  }

  async read(ref: { name: string; version: string }): Promise<ArtifactBytes> {
    try {
      return { bytes: Buffer.from(await this.deps.repository.read(ref.name, ref.version), 'utf8'), metadata: {} };
    } catch (err) {
      if (err instanceof AppError && !err.transient)
        throw new UploadRefused(err.code === 'not_found' ? 'blobPath' : 'size', err);
      throw err;
    }
  }

  async validate(
    ref: { name: string; version: string },
    content: ArtifactBytes,
    _at: string,
    blobPath: string,
  ): Promise<CompiledSignals | 'unchanged'> {
    const text = Buffer.from(content.bytes).toString('utf8');
    const signals = compileSignalsText(text, ref.name, ref.version, blobPath);
    const state = (await this.deps.store.read(ref.name)) ?? EMPTY_SIGNALS_STATE;
    if ((state.active ?? this.deps.serving()) === ref.version) return 'unchanged';
    try {
      checkCompatible(signals, this.deps.requirements());
    } catch (err) {
      throw new UploadRefused('compatibility', err);
    }
    return signals;
  }

  async publish(ref: { name: string; version: string }, signals: CompiledSignals): Promise<Published> {
    this.deps.keep(signals);
    const serving = this.deps.serving();
    const u = await this.deps.store.update(ref.name, (cur) =>
      SIGNALS_TRAFFIC.activate(cur ?? EMPTY_SIGNALS_STATE, signals.version, serving),
    );
    return { generation: u.state?.generation ?? 0, mode: 'active' };
  }
}
