/**
 * The model upload's feature check (docs/signals.md "Models"): a manifest's input features must each be computed by
 * the signals version it names (`manifest.signals`), or by the shipped version when it names none. Refusals name
 * the feature (`features.<i>.name`) or the version (`signals`).
 */
import { toAppError } from '../errors/errors';
import type { FeatureCheck, ManifestProblem } from '../models/model-folder';
import type { ModelManifest } from '../models/manifest';
import type { CompiledSignals } from './compiled-signals';

/** Where the check finds signals versions. */
export interface SignalsVersions {
  /** The signals name this app serves (`SIGNALS_NAME`). */
  readonly name: string;
  /** The shipped version (what a manifest without `signals` is computed by). */
  shipped(): CompiledSignals;
  /** A version by number (compiled once). @throws AppError `not_found`, `signals_invalid`, … */
  compiled(version: string): Promise<CompiledSignals>;
}

/** The check over `versions`. */
export function signalsFeatureCheck(versions: SignalsVersions): FeatureCheck {
  return async (manifest: ModelManifest): Promise<readonly ManifestProblem[]> => {
    const ref = manifest.signals;
    let signals: CompiledSignals;
    if (ref === undefined) signals = versions.shipped();
    else if (ref.name !== versions.name)
      return [{ path: 'signals.name', message: `this app serves signals "${versions.name}", not "${ref.name}"` }];
    else
      try {
        signals = await versions.compiled(ref.version);
      } catch (err) {
        const e = toAppError(err);
        if (e.transient) throw e; // retried: the version may be readable later
        return [{ path: 'signals.version', message: `signals ${ref.name} ${ref.version}: ${e.message}` }];
      }
    const problems: ManifestProblem[] = [];
    manifest.features.forEach((f, i) => {
      if (signals.indexOf(f.name) === undefined)
        problems.push({
          path: `features.${i}.name`,
          message: `"${f.name}" is not computed by signals ${signals.name} ${signals.version}`,
        });
    });
    return problems;
  };
}
