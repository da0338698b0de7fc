/**
 * The whole-document kind of the rollout (rulesets, signals: versions that swap as a whole, read from one
 * {@link DocumentRepository}): its {@link DocumentSpec} (what the kind supplies: its layout, how a version compiles,
 * whether it may serve beside what serves) and its kind of the upload pipeline ({@link DocumentKind}): the path
 * `{prefix}/{name}/{version}.json`, the compile, newer-than (every kind's rule), compatibility, and a publication
 * that makes the version the pointer's active one (the one served before it kept for rollback).
 * @module
 */
import { AppError, type ErrorCode } from '../errors/errors';
import type { AdminBodies } from './admin-bodies';
import { parseDocumentPath, type DocumentLayout, type DocumentRepository } from './document-repository';
import type { PointerStore } from './pointer-store';
import { UploadRefused, type ArtifactBytes, type ArtifactKind, type Published } from './upload-pipeline';
import { EMPTY_VERSION_STATE, stamped, type VersionState, type VersionTraffic } from './version-traffic';

/** A compiled document of some version. */
export interface Versioned {
  readonly version: string;
}

/** The name and version a path names. */
export interface DocumentRef {
  readonly name: string;
  readonly version: string;
}

/** What a whole-document kind supplies. */
export interface DocumentSpec<C extends Versioned> {
  /** The kind (messages, readiness, upload outcomes). */
  readonly kind: 'ruleset' | 'signals';
  /** The name this app serves. */
  readonly name: string;
  readonly layout: DocumentLayout;
  /** The error code of an invalid document, e.g. `ruleset_invalid`. */
  readonly invalidCode: ErrorCode;
  /** Its transitions and shares (its salts). */
  readonly traffic: VersionTraffic;
  /** Its admin bodies (its version pattern). */
  readonly bodies: AdminBodies;
  /**
   * Compiles `text` read from `source`, refusing a document that is not `ref`'s name and version. `upload`: for an
   * upload (a kind may check more there). @throws AppError `invalidCode` naming every invalid field.
   */
  compile(text: string, ref: DocumentRef, source: string, upload: boolean): C;
  /** Refuses a version that may not serve beside what serves now (uploads, promote, traffic, rollback). Default none. */
  compatible?(compiled: C): void;
}

/** Dependencies of a {@link DocumentKind}. */
export interface DocumentKindDeps<C extends Versioned> {
  readonly spec: DocumentSpec<C>;
  readonly store: PointerStore<VersionState>;
  readonly repository: DocumentRepository;
  /** The version this instance serves (the shipped one until a pointer names another). */
  readonly serving: () => string | undefined;
  /** Keeps a validated version, so that this instance swaps without compiling it again. */
  readonly keep: (compiled: C) => void;
  /** This instance, as the pointer's last change names it. */
  readonly instanceId: string;
}

/** A whole-document kind, as the upload pipeline sees it. */
export class DocumentKind<C extends Versioned> implements ArtifactKind<C> {
  readonly kind: string;
  readonly maxBytes: number;
  constructor(private readonly deps: DocumentKindDeps<C>) {
    this.kind = deps.spec.kind;
    this.maxBytes = deps.spec.layout.maxBytes;
  }

  get name(): string {
    return this.deps.spec.name;
  }

  parsePath(blobPath: string): DocumentRef {
    const { layout, invalidCode, kind, name } = this.deps.spec;
    const ref = parseDocumentPath(layout, blobPath);
    const shape = `${layout.prefix}/{name}/{version}.json`;
    if (ref === undefined)
      throw new UploadRefused(
        'blobPath',
        new AppError(invalidCode, `${blobPath.slice(0, 256)} is not ${shape}.`, {
          errors: [{ path: 'blobPath', message: `must be ${shape} with a valid name and version` }],
        }),
      );
    if (ref.name !== name)
      throw new UploadRefused(
        'name',
        new AppError(invalidCode, `This app serves ${kind} "${name}", not "${ref.name}".`, {
          errors: [{ path: 'name', message: `must be ${name}` }],
        }),
      );
    return ref;
  }

  async read(ref: DocumentRef): Promise<ArtifactBytes> {
    try {
      return { bytes: Buffer.from(await this.deps.repository.read(ref.name, ref.version), 'utf8'), metadata: {} };
    } catch (err) {
      if (err instanceof AppError && !err.transient)
        throw new UploadRefused(err.code === 'not_found' ? 'blobPath' : 'size', err);
      throw err;
    }
  }

  async validate(ref: DocumentRef, content: ArtifactBytes, _at: string, blobPath: string): Promise<C | 'unchanged'> {
    const { spec } = this.deps;
    const compiled = spec.compile(Buffer.from(content.bytes).toString('utf8'), ref, blobPath, true);
    const state = (await this.deps.store.read(ref.name)) ?? EMPTY_VERSION_STATE;
    const active = state.active ?? this.deps.serving();
    if (active === ref.version) return 'unchanged';
    const notNewer = spec.traffic.rules.notNewer(ref.version, active, spec.invalidCode);
    if (notNewer !== undefined) throw new UploadRefused('version', notNewer);
    try {
      spec.compatible?.(compiled);
    } catch (err) {
      throw new UploadRefused('compatibility', err);
    }
    return compiled;
  }

  async publish(ref: DocumentRef, compiled: C, at: string): Promise<Published> {
    this.deps.keep(compiled);
    const serving = this.deps.serving();
    const { traffic } = this.deps.spec;
    const change = { kind: 'publish', version: compiled.version, by: this.deps.instanceId, at } as const;
    const u = await this.deps.store.update(ref.name, (cur = EMPTY_VERSION_STATE) =>
      stamped(cur, traffic.activate(cur, compiled.version, serving), change),
    );
    return { generation: u.state?.generation ?? 0, mode: 'active' };
  }
}
