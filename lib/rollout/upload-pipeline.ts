/**
 * The one pipeline of an uploaded artifact, for every kind (on the one instance its blob trigger fires on): the
 * name and version from the path, the bytes read with a size cap, the kind's validation, publication to the
 * pointer store, and convergence (every instance, this one included, follows the pointer). A refused upload is an
 * outcome, not an error: it is logged and recorded in the pointer store (listed by the admin status) and the
 * previous version keeps serving. Only transient failures throw (the trigger retries).
 * @module
 */
import { AppError, toAppError } from '../errors/errors';
import type { Logger } from '../platform/logger';
import type { PointerStore, Rejection } from './pointer-store';

/** An uploaded artifact, as a blob trigger delivers it: by reference (`bytes` absent) or with its bytes. */
export interface ArtifactUpload {
  /** The trigger's `BlobTrigger`, e.g. `models/fraud/1.1.0.onnx`. */
  readonly blobPath: string;
  /** The blob's content, when the trigger delivered it; absent: the kind reads it (with the cap). */
  readonly bytes?: Uint8Array;
  /** Blob metadata; absent: the kind's read supplies the blob's own. */
  readonly metadata?: Readonly<Record<string, unknown>>;
}

/** The name and version an upload's path names. */
export interface ArtifactRef {
  readonly name: string;
  readonly version: string;
}

/** An upload's content. */
export interface ArtifactBytes {
  readonly bytes: Uint8Array;
  readonly metadata: Readonly<Record<string, unknown>>;
  /** Hex SHA-256, when the read computed it while streaming. */
  readonly sha256?: string;
}

/** A refusal at a named step of a kind's work (the step is the rejection's `check`). */
export class UploadRefused extends Error {
  readonly error: AppError;
  constructor(
    readonly check: string,
    cause: unknown,
  ) {
    const error = toAppError(cause);
    super(error.message, { cause });
    this.error = error;
  }
}

/** What a publication reports: the pointer's generation after it, and whether the version is active or a candidate. */
export interface Published {
  readonly generation: number;
  readonly mode: 'active' | 'candidate';
}

/** What became of an upload (the same shape for every kind; `P` is what a kind adds to a publication). */
export type UploadOutcome<P extends object = object> =
  | ({ readonly kind: 'published'; readonly name: string; readonly version: string } & Published & P)
  | { readonly kind: 'unchanged'; readonly name: string; readonly version: string }
  | { readonly kind: 'rejected'; readonly rejection: Rejection };

/**
 * What an artifact kind supplies to the pipeline: how an upload is read, validated and published. A step refuses
 * by throwing {@link UploadRefused} (its check) or a non-transient AppError (check `validate`); transient AppErrors
 * propagate.
 * @typeParam V the kind's validated version, between validation and publication.
 */
export interface ArtifactKind<V, P extends object = object> {
  /** The kind, e.g. `model` (logs). */
  readonly kind: string;
  /** The artifact name this app serves (a rejection of an unparseable path names it). */
  readonly name: string;
  /** Largest upload accepted, bytes. */
  readonly maxBytes: number;
  /** The refusal of an upload over {@link maxBytes}; default `payload_too_large` ({@link tooLarge}). */
  readonly tooLarge?: (ref: ArtifactRef, size: number) => AppError;
  /** The name and version `blobPath` names, refusing another name. @throws UploadRefused (`blobPath`, `name`). */
  parsePath(blobPath: string): ArtifactRef;
  /** Reads an upload delivered by reference, at most `maxBytes`. */
  read(ref: ArtifactRef, blobPath: string): Promise<ArtifactBytes>;
  /** Validates; `unchanged` when this very content is already published. */
  validate(ref: ArtifactRef, content: ArtifactBytes, at: string, blobPath: string): Promise<V | 'unchanged'>;
  /** Publishes to the pointer store (a refusal there, e.g. not newer than the active version: check `version`). */
  publish(ref: ArtifactRef, validated: V, at: string): Promise<Published & P>;
}

/** Dependencies of an {@link UploadPipeline}. */
export interface UploadPipelineDeps<V, P extends object> {
  readonly kind: ArtifactKind<V, P>;
  /** Where rejections are recorded. */
  readonly store: Pick<PointerStore<never>, 'recordRejection'>;
  /** This instance's follower of the pointer. */
  readonly follower: { converge(): Promise<void> };
  readonly instanceId: string;
  /** Wall clock, epoch ms. */
  readonly wallNow: () => number;
  readonly logger: Logger;
}

/** Handles the uploads of one artifact kind. */
export class UploadPipeline<V, P extends object = object> {
  constructor(private readonly deps: UploadPipelineDeps<V, P>) {}

  /**
   * Handles one upload. Rejections are outcomes, not errors (retrying would not help).
   * @throws transient AppErrors only (store or container unavailable): the trigger retries.
   */
  async handle(u: ArtifactUpload): Promise<UploadOutcome<P>> {
    const { kind } = this.deps;
    const at = new Date(this.deps.wallNow()).toISOString();
    let ref: ArtifactRef = { name: kind.name, version: '?' };
    try {
      ref = kind.parsePath(u.blobPath);
      if (u.bytes !== undefined && u.bytes.length > kind.maxBytes)
        throw new UploadRefused('size', (kind.tooLarge ?? ((r, n) => tooLarge(kind, r, n)))(ref, u.bytes.length));
      const content =
        u.bytes === undefined ? await kind.read(ref, u.blobPath) : { bytes: u.bytes, metadata: u.metadata ?? {} };
      const validated = await kind.validate(ref, content, at, u.blobPath);
      if (validated === 'unchanged') return { kind: 'unchanged', name: ref.name, version: ref.version };
      const published = await kind.publish(ref, validated, at);
      await this.deps.follower.converge();
      this.deps.logger.info(`${kind.kind} published`, {
        name: ref.name,
        version: ref.version,
        mode: published.mode,
        generation: published.generation,
      });
      return { kind: 'published', name: ref.name, version: ref.version, ...published };
    } catch (err) {
      if (err instanceof UploadRefused) return this.reject(ref, u.blobPath, err.check, err.error, at);
      if (err instanceof AppError && !err.transient) return this.reject(ref, u.blobPath, 'validate', err, at);
      throw err;
    }
  }

  private async reject(
    ref: ArtifactRef,
    blobPath: string,
    check: string,
    e: AppError,
    at: string,
  ): Promise<UploadOutcome<P>> {
    const kind = this.deps.kind.kind;
    const rejection: Rejection = {
      name: ref.name,
      version: ref.version,
      blobPath: blobPath.slice(0, 256),
      check,
      code: e.code,
      reason: e.message,
      errors: e.errors,
      by: this.deps.instanceId,
      at,
    };
    this.deps.logger.warn(`${kind} rejected`, {
      name: ref.name,
      version: ref.version,
      blobPath: rejection.blobPath,
      check,
      code: e.code,
      reason: e.message,
    });
    await this.deps.store
      .recordRejection(rejection)
      .catch((x: unknown) =>
        this.deps.logger.error(`could not record a ${kind} rejection`, { reason: toAppError(x).message }),
      );
    return { kind: 'rejected', rejection };
  }
}

/** `payload_too_large` for an upload over the kind's cap. */
export function tooLarge(kind: { kind: string; maxBytes: number }, ref: ArtifactRef, size: number): AppError {
  return new AppError(
    'payload_too_large',
    `${kind.kind} ${ref.name}@${ref.version} is ${size} bytes; at most ${kind.maxBytes} are accepted.`,
    { transient: false, errors: [{ path: 'size', message: `must be at most ${kind.maxBytes} bytes` }] },
  );
}

/** How a blob trigger logs an outcome: a warning for a rejection (naming the step, code and every error), else a line. */
export function describeOutcome(kind: string, o: UploadOutcome<Partial<Published>>): { warn: boolean; text: string } {
  if (o.kind === 'rejected') {
    const r = o.rejection;
    const where = r.errors.length === 0 ? '' : ` [${r.errors.map((e) => `${e.path}: ${e.message}`).join('; ')}]`;
    return {
      warn: true,
      text: `${kind} rejected: ${r.name}@${r.version} (${r.blobPath}) failed ${r.check} (${r.code}): ${r.reason}${where}`,
    };
  }
  if (o.kind === 'unchanged') return { warn: false, text: `${kind} already published: ${o.name}@${o.version}` };
  return {
    warn: false,
    text: `${kind} published: ${o.name}@${o.version} as ${o.mode ?? 'active'} (generation ${o.generation ?? '?'})`,
  };
}
