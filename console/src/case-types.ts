/** The case page's answer fields beyond console/src/types.ts (docs/cases.md, docs/console.md). */
import type { CaseDetail } from './types.js';

/** A list a lead may add the case's value to: its name and the payment field it is keyed by. */
export interface CaseListOption {
  readonly name: string;
  readonly key: string;
}

/** `GET /api/cases/{id}`; `lists`: for a lead on a case not closed, the lists the active ruleset declares. */
export interface CasePageDetail extends CaseDetail {
  readonly lists?: readonly CaseListOption[];
}
