/**
 * Signals rollout: the signals kind of the one rollout of whole documents (`lib/rollout/document-rollout.ts`). An
 * upload (`features/{name}/{version}.json`, blob trigger) is checked (compile, name and version, newer than the
 * active version, compatibility with what serves) and, if good, published as the pointer's active version; every
 * instance swaps its {@link SignalsServing} atomically. Admin: status, promote, rollback, traffic (canary and shadow),
 * with every kind's bodies and rules; a version that lacks a signal what serves reads is refused on promote, traffic
 * and rollback as on upload.
 * @module
 */
import type { DocumentSpec } from '../rollout/document-kind';
import { DocumentRollout, type DocumentRolloutDeps, type DocumentStatus } from '../rollout/document-rollout';
import type { PointerStore } from '../rollout/pointer-store';
import type { Logger } from '../platform/logger';
import type { Timers } from '../platform/timers';
import type { CompiledSignals } from './compiled-signals';
import { SIGNALS_LAYOUT, type SignalsRepository } from './signals-repository';
import type { SignalsServing } from './signals-serving';
import type { SignalsShadow, SignalsShadowReport } from './signals-shadow';
import { SIGNALS_BODIES, SIGNALS_TRAFFIC, type SignalsState } from './signals-traffic';
import { checkCompatible, compileSignalsText, type SignalsRequirements } from './signals-upload';

export { RETRY_FIRST_MS, RETRY_MAX_MS } from '../rollout/document-rollout';

/** Dependencies of a {@link SignalsRollout}. */
export interface SignalsRolloutDeps {
  readonly name: string;
  readonly serving: SignalsServing;
  readonly store: PointerStore<SignalsState>;
  readonly repository: SignalsRepository;
  /** What serves now reads of the signals (the serving ruleset's and model versions'). */
  readonly requirements: SignalsRequirements;
  readonly timers: Timers;
  readonly reconcileMs: number;
  /** Wall clock, epoch ms. */
  readonly wallNow?: () => number;
  /** This instance, as rejections and changes name it. Default `{host}-{pid}`. */
  readonly instanceId?: string;
  /** Default silent. */
  readonly logger?: Logger;
  /** The shadow figures of the candidate (what the pipeline recorded), shown by `status`. */
  readonly shadow?: SignalsShadow;
  readonly on?: DocumentRolloutDeps<CompiledSignals>['on'];
}

/**
 * The admin view (`GET /api/signals/{name}`): every whole-document kind's, with the candidate's signals beside the
 * active version's over its shadow share of payments on this instance.
 */
export type SignalsStatus = DocumentStatus<SignalsShadowReport>;

/** The signals kind: what it supplies to the one rollout. */
export function signalsSpec(name: string, requirements: SignalsRequirements): DocumentSpec<CompiledSignals> {
  return {
    kind: 'signals',
    name,
    layout: SIGNALS_LAYOUT,
    invalidCode: 'signals_invalid',
    traffic: SIGNALS_TRAFFIC,
    bodies: SIGNALS_BODIES,
    compile: (text, ref, source) => compileSignalsText(text, ref.name, ref.version, source),
    compatible: (s) => checkCompatible(s, requirements()),
  };
}

/** Signals rollout on one instance. */
export class SignalsRollout extends DocumentRollout<CompiledSignals, SignalsShadowReport> {
  constructor(deps: SignalsRolloutDeps) {
    const serving = deps.serving;
    super({
      ...deps,
      spec: signalsSpec(deps.name, deps.requirements),
      target: {
        serving: () => serving.active.version,
        candidate: () => serving.candidate?.version,
        swap: (s) => serving.swap(s),
        setCandidate: (s, split) => serving.setCandidate(s, split),
        shadow: () => {
          const report = deps.shadow?.report();
          return report === undefined || report.candidate !== serving.candidate?.version ? undefined : report;
        },
      },
    });
  }
}
