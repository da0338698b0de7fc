/**
 * Rule changes the way fraud teams make them (docs/governance.md): a lead drafts a new version of the served
 * ruleset, checked as an upload is (schema, compile with the rule and column of each error, golden cases); runs
 * its backtest on past payments; submits it; another lead, never its author, approves or rejects it. A draft
 * never serves: promote, canary and shadow of a version that has a draft need it approved ({@link gate}); an
 * approved draft's document is what the rollout then reads ({@link approvedDocument}).
 * @module
 */
import { GOLDEN_THRESHOLDS } from '../decisioning/ruleset-upload';
import { loadRuleset } from '../decisioning/load-ruleset';
import { MAX_RULESET_BYTES, parseRulesetPath } from '../decisioning/ruleset-repository';
import { AppError, toAppError } from '../errors/errors';
import type { ArtifactAdmin } from '../http/admin-routes';
import type { Identity } from '../identity/identity';
import type { AuditEntry } from './audit-log';
import { checkDocumentText, checkRouteVersion, parseComment, parseWindow } from './draft-bodies';
import type { DraftBacktests } from './draft-backtest';
import type { Draft, DraftState, DraftStore } from './draft-store';
import { diffDocuments, type DraftDiff } from './draft-diff';
import { approvedDocument, gate } from './draft-gate';

/** Headers, as the adapters pass them. */
type Headers = { get(name: string): string | null };

/** A `running` backtest not written for this long was interrupted (its instance stopped), ms. */
export const INTERRUPTED_AFTER_MS = 5 * 60_000;
/** How long a backtest request waits for its result before answering 202, ms. */
const ANSWER_WITHIN_MS = 1_000;

/** Dependencies of {@link Drafts}. */
export interface DraftsDeps {
  readonly store: DraftStore;
  readonly backtests: DraftBacktests;
  readonly identity: Identity;
  /** The ruleset this app serves (`RULESET_NAME`). */
  readonly rulesetName: string;
  /** The versions of the ruleset already uploaded or shipped (a draft is a new one). */
  readonly versions: () => Promise<readonly string[]>;
  /** An uploaded version's document (capped). */
  readonly read: (version: string) => Promise<string>;
  /** Appends to the audit trail. */
  readonly record: (e: AuditEntry) => Promise<void>;
  /** Wall clock, epoch ms. */
  readonly wallClock: () => number;
  /** The version serving here and its document (a draft's diff is against it); `undefined` without one. */
  readonly serving: () => { readonly version: string; readonly document: unknown } | undefined;
}

/** The drafts of the served ruleset. */
export class Drafts {
  constructor(private readonly d: DraftsDeps) {}

  private lead(headers: Headers): string {
    return this.d.identity.require(headers, ['lead']).name;
  }

  private check(name: string): void {
    if (name !== this.d.rulesetName)
      throw new AppError('not_found', `This app serves ruleset ${this.d.rulesetName}, not ${name.slice(0, 64)}.`);
  }

  private now(): string {
    return new Date(this.d.wallClock()).toISOString();
  }

  /**
   * `POST /api/rulesets/{name}/drafts`: a new version, checked as an upload is.
   * @throws AppError `ruleset_invalid` (422) naming each rule and column that does not compile or golden case that
   *   fails; `conflict` when the version exists or has a draft; `forbidden` without the lead role.
   */
  async create(headers: Headers, name: string, body: unknown): Promise<Draft> {
    const author = this.lead(headers);
    this.check(name);
    checkDocumentText(body);
    return this.draftOf(name, author, JSON.stringify(body ?? null), `draft of ${name}`, true);
  }

  /** An upload that may not roll out directly (`RULESET_DIRECT_ROLLOUT=false`) becomes a draft by `blob-upload`. */
  async fromUpload(name: string, text: string, source: string): Promise<Draft> {
    this.check(name);
    return this.draftOf(name, 'blob-upload', text, source, false); // the upload is the version's only copy
  }

  /**
   * The blob trigger with `RULESET_DIRECT_ROLLOUT=false`: the upload becomes a draft by `blob-upload`, or is
   * refused (logged as a warning) when it does not validate. Only transient failures throw (retried).
   */
  async upload(blobPath: string, bytes: Uint8Array | undefined): Promise<{ warn: boolean; text: string }> {
    const ref = parseRulesetPath(blobPath);
    const where = blobPath.slice(0, 256);
    try {
      if (ref === undefined) throw new AppError('ruleset_invalid', `${where} is not rulesets/{name}/{version}.json.`);
      if (bytes !== undefined && bytes.byteLength > MAX_RULESET_BYTES)
        throw new AppError('payload_too_large', `A ruleset is at most ${MAX_RULESET_BYTES} bytes.`);
      const text = bytes === undefined ? await this.d.read(ref.version) : Buffer.from(bytes).toString('utf8');
      const d = await this.fromUpload(ref.name, text, where);
      return {
        warn: false,
        text: `ruleset upload ${d.name} ${d.version} is a draft (RULESET_DIRECT_ROLLOUT=false): it serves once another lead approves it and it is promoted`,
      };
    } catch (err) {
      const e = toAppError(err);
      if (e.transient) throw e;
      const rules = (e.errors ?? []).map((f) => [f.rule, f.path, f.message].filter(Boolean).join(' ')).join('; ');
      return {
        warn: true,
        text: `ruleset upload ${where} refused as a draft: ${e.message}${rules === '' ? '' : ` (${rules})`}`,
      };
    }
  }

  private async draftOf(name: string, author: string, text: string, source: string, isNew: boolean): Promise<Draft> {
    const rs = loadRuleset(text, GOLDEN_THRESHOLDS, source);
    checkDocumentText(rs.document); // an upload's too: PostgreSQL refuses NUL
    if (rs.name !== name)
      throw new AppError('ruleset_invalid', `The document is ruleset ${rs.name}, not ${name}.`, {
        errors: [{ path: 'name', message: `must be ${name}` }],
      });
    if (isNew && (await this.d.versions()).includes(rs.version))
      throw new AppError('conflict', `Ruleset ${name} ${rs.version} exists already: a draft is a new version.`, {
        errors: [{ path: 'version', message: 'must be a new version' }],
      });
    const draft = await this.d.store.create({
      name,
      version: rs.version,
      document: rs.document,
      author,
      state: 'draft',
      createdAt: this.now(),
    });
    await this.d.record({
      actor: author,
      kind: 'ruleset',
      name,
      action: 'draft',
      oldValue: null,
      newValue: { version: rs.version, state: 'draft' },
    });
    return draft;
  }

  /** `GET /api/rulesets/{name}/drafts`: the newest drafts, without their documents. */
  async list(headers: Headers, name: string): Promise<{ drafts: Draft[] }> {
    this.d.identity.require(headers, ['analyst', 'lead']);
    this.check(name);
    return { drafts: await this.d.store.list(name) };
  }

  /** `GET /api/rulesets/{name}/drafts/{version}`. @throws AppError `not_found`. */
  async get(headers: Headers, name: string, version: string): Promise<Draft> {
    this.d.identity.require(headers, ['analyst', 'lead']);
    return this.read(name, version);
  }

  private async read(name: string, version: string): Promise<Draft> {
    this.check(name);
    checkRouteVersion(version);
    const d = await this.d.store.get(name, version);
    if (d === undefined) throw new AppError('not_found', `No draft ${name} ${version.slice(0, 64)}.`);
    const b = d.backtest;
    // a backtest left `running` by an instance that stopped reads as interrupted
    if (
      b?.state === 'running' &&
      !this.d.backtests.isRunning(d) &&
      this.d.wallClock() - Date.parse(b.at) > INTERRUPTED_AFTER_MS
    )
      return { ...d, backtest: { ...b, state: 'failed', error: 'interrupted: run it again' } };
    return d;
  }

  /**
   * `POST …/drafts/{version}/backtest { from, to, useCurrentLists? }`: starts the backtest; the answer is the
   * backtest, `done` when it ended within a second (200), else `running` (202: `GET` the same path until it is done).
   * @throws AppError `validation_failed` naming `from` / `to` / `useCurrentLists`; `conflict` when one is running.
   */
  async backtest(
    headers: Headers,
    name: string,
    version: string,
    body: unknown,
  ): Promise<{ status: 200 | 202; backtest: unknown }> {
    this.lead(headers);
    const { fromMs, toMs, useCurrentLists } = parseWindow(body);
    const d = await this.read(name, version);
    await this.d.backtests.start(d, fromMs, toMs, { useCurrentLists });
    await this.d.backtests.settle(d, ANSWER_WITHIN_MS);
    const b = (await this.read(name, version)).backtest;
    return { status: b?.state === 'running' ? 202 : 200, backtest: b };
  }

  /** `GET …/drafts/{version}/backtest`. @throws AppError `not_found` when none has run. */
  async backtestOf(headers: Headers, name: string, version: string): Promise<unknown> {
    const d = await this.get(headers, name, version);
    if (d.backtest === undefined) throw new AppError('not_found', 'No backtest of this draft has run.');
    return d.backtest;
  }

  /** `POST …/submit { comment? }`: for approval, with its finished backtest. */
  async submit(headers: Headers, name: string, version: string, body: unknown): Promise<Draft> {
    const actor = this.lead(headers);
    const comment = parseComment(body);
    const d = await this.read(name, version);
    if (d.backtest?.state !== 'done')
      throw new AppError('conflict', 'Run the backtest to its end before submitting the draft.');
    return this.move(d, actor, 'submit', ['draft', 'rejected'], {
      state: 'submitted',
      ...(comment === undefined ? {} : { comment }),
    });
  }

  /** `POST …/approve { comment? }`: by a lead who is not the author. @throws AppError `forbidden` for the author. */
  approve(headers: Headers, name: string, version: string, body: unknown): Promise<Draft> {
    return this.decide(headers, name, version, body, 'approved');
  }

  /** `POST …/reject { comment? }`: by a lead who is not the author. */
  reject(headers: Headers, name: string, version: string, body: unknown): Promise<Draft> {
    return this.decide(headers, name, version, body, 'rejected');
  }

  private async decide(
    headers: Headers,
    name: string,
    version: string,
    body: unknown,
    to: 'approved' | 'rejected',
  ): Promise<Draft> {
    const actor = this.lead(headers);
    const comment = parseComment(body);
    const d = await this.read(name, version);
    if (d.state !== 'submitted') throw new AppError('conflict', `The draft is ${d.state}, not submitted.`);
    if (d.author === actor)
      throw new AppError('forbidden', `The author (${actor}) cannot decide on their own draft: another lead does.`);
    return this.move(d, actor, to === 'approved' ? 'approve' : 'reject', ['submitted'], {
      state: to,
      approver: actor,
      ...(comment === undefined ? {} : { comment }),
    });
  }

  private async move(
    d: Draft,
    actor: string,
    action: string,
    from: readonly DraftState[],
    change: { state: DraftState; approver?: string; comment?: string },
  ): Promise<Draft> {
    const next = await this.d.store.update(d.name, d.version, from, { ...change, at: this.now() });
    if (next === undefined) throw new AppError('conflict', `The draft is no longer ${from.join(' or ')}.`);
    await this.d.record({
      actor,
      kind: 'ruleset',
      name: d.name,
      action,
      oldValue: { version: d.version, state: d.state },
      newValue: {
        version: d.version,
        state: next.state,
        ...(change.comment === undefined ? {} : { comment: change.comment }),
      },
    });
    return next;
  }

  /** The document of an approved draft (what the rollout reads for a version not uploaded), or `undefined`. */
  approvedDocument(name: string, version: string): Promise<string | undefined> {
    return approvedDocument(this.d.store, this.d.rulesetName, name, version);
  }

  /** The ruleset admin with the four-eyes rule: a draft not approved is never promoted, canaried or shadowed. */
  gate(inner: ArtifactAdmin): ArtifactAdmin {
    return gate(this.d.store, inner);
  }

  /**
   * `GET …/drafts/{version}/diff`: per rule what the draft adds, removes or changes against the version serving
   * here, with the changed lines; the other fields that differ.
   * @throws AppError `not_found` (no draft, or no ruleset serving).
   */
  async diff(headers: Headers, name: string, version: string): Promise<DraftDiff & { serving: string }> {
    const d = await this.get(headers, name, version);
    const serving = this.d.serving();
    if (serving === undefined) throw new AppError('not_found', 'No ruleset serves here to compare the draft with.');
    return { serving: serving.version, ...diffDocuments(serving.document, d.document) };
  }

  /**
   * `POST …/drafts/{version}/promote`: a lead promotes an approved draft through `admin(actor)`, the ruleset admin's
   * promote behind the same gate and audit as `POST /api/rulesets/{name}/promote`.
   * @throws AppError `forbidden` without the lead role; `draft_not_approved` for a draft not approved.
   */
  async promote(headers: Headers, name: string, version: string, admin: (actor: string) => ArtifactAdmin) {
    const actor = this.lead(headers);
    const d = await this.read(name, version);
    if (d.state !== 'approved')
      throw new AppError('draft_not_approved', `Draft ${d.version} is ${d.state}: another lead approves it first.`);
    return admin(actor).promote(name, { version: d.version });
  }
}
