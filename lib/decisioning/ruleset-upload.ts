/**
 * What the ruleset kind checks of a document (`lib/rollout/document-kind.ts` does the rest of an upload): the schema,
 * the compile (rule id and column of what does not compile), the golden cases, for an upload a signal the rules read
 * that the serving signals lack, and the document's name and version against its path.
 */
import { AppError } from '../errors/errors';
import type { DocumentRef } from '../rollout/document-kind';
import type { CompiledRuleset, ServingSignals } from './compile-ruleset';
import { loadRuleset } from './load-ruleset';

/**
 * Thresholds golden cases are checked with when the ruleset declares no `default` profile (the model's are
 * not known when a ruleset loads).
 */
export const GOLDEN_THRESHOLDS = Object.freeze({ review: 0.5, decline: 0.9 });

/**
 * Compiles a ruleset's text read from `source`, refusing one that is not `ref`'s name and version.
 * @param signals the signals serving beside the rules (an upload's check), if any.
 * @throws AppError `ruleset_invalid` naming each rule and column that does not compile, or golden case that fails.
 */
export function compileRulesetText(
  text: string,
  ref: DocumentRef,
  source: string,
  signals?: ServingSignals,
): CompiledRuleset {
  const rs = loadRuleset(text, GOLDEN_THRESHOLDS, source, signals);
  if (rs.name !== ref.name || rs.version !== ref.version)
    throw new AppError('ruleset_invalid', 'The document name and version must match its path.', {
      errors: [{ path: 'version', message: `the path says ${ref.name} ${ref.version}` }],
    });
  return rs;
}
