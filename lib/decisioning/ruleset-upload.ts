/**
 * The ruleset kind of the upload pipeline (`lib/pointer/upload-pipeline.ts`): what differs for rulesets. The path
 * is `rulesets/{name}/{version}.json`; validation is the schema, the compile (rule id and column of what does not
 * compile) and the golden cases, and the document's name and version must match its path; publication makes the
 * version the pointer's active one (the version served before it is kept for rollback).
 */
import { AppError } from '../errors/errors';
import type { PointerStore } from '../pointer/pointer-store';
import { UploadRefused, type ArtifactBytes, type ArtifactKind, type Published } from '../pointer/upload-pipeline';
import type { CompiledRuleset, ServingSignals } from './compile-ruleset';
import { loadRuleset } from './load-ruleset';
import { MAX_RULESET_BYTES, parseRulesetPath, type RulesetRepository } from './ruleset-repository';
import { activate, EMPTY_STATE, type RulesetState } from './ruleset-traffic';

/**
 * Thresholds golden cases are checked with when the ruleset declares no `default` profile (the model's are
 * not known when a ruleset loads).
 */
export const GOLDEN_THRESHOLDS = Object.freeze({ review: 0.5, decline: 0.9 });

/** Dependencies of a {@link RulesetKind}. */
export interface RulesetKindDeps {
  /** The ruleset this app serves (`RULESET_NAME`). */
  readonly name: string;
  readonly store: PointerStore<RulesetState>;
  readonly repository: RulesetRepository;
  /** The version this instance serves (the shipped one until a pointer names another). */
  readonly serving: () => string | undefined;
  /** Keeps a validated ruleset, so that this instance swaps without compiling it again. */
  readonly keep: (rs: CompiledRuleset) => void;
  /** The signals version serving here: a rule reading a signal it lacks is refused (rule id, column). */
  readonly signals?: () => ServingSignals | undefined;
}

/** Rulesets, as the upload pipeline sees them. */
export class RulesetKind implements ArtifactKind<CompiledRuleset> {
  readonly kind = 'ruleset';
  readonly maxBytes = MAX_RULESET_BYTES;
  constructor(private readonly deps: RulesetKindDeps) {}

  get name(): string {
    return this.deps.name;
  }

  parsePath(blobPath: string): { name: string; version: string } {
    const ref = parseRulesetPath(blobPath);
    if (ref === undefined)
      throw new UploadRefused(
        'blobPath',
        new AppError('ruleset_invalid', `${blobPath.slice(0, 256)} is not rulesets/{name}/{version}.json.`),
      );
    if (ref.name !== this.deps.name)
      throw new UploadRefused(
        'name',
        new AppError('ruleset_invalid', `This app serves ruleset "${this.deps.name}", not "${ref.name}".`, {
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
  ): Promise<CompiledRuleset | 'unchanged'> {
    const rs = loadRuleset(
      Buffer.from(content.bytes).toString('utf8'),
      GOLDEN_THRESHOLDS,
      blobPath,
      this.deps.signals?.(),
    );
    if (rs.name !== ref.name || rs.version !== ref.version)
      throw new AppError('ruleset_invalid', 'The document name and version must match its path.', {
        errors: [{ path: 'version', message: `the path says ${ref.name} ${ref.version}` }],
      });
    const state = (await this.deps.store.read(ref.name)) ?? EMPTY_STATE;
    return (state.active ?? this.deps.serving()) === ref.version ? 'unchanged' : rs;
  }

  async publish(ref: { name: string; version: string }, rs: CompiledRuleset): Promise<Published> {
    this.deps.keep(rs);
    const serving = this.deps.serving();
    const u = await this.deps.store.update(ref.name, (cur) => activate(cur ?? EMPTY_STATE, rs.version, serving));
    return { generation: u.state?.generation ?? 0, mode: 'active' };
  }
}
