/**
 * The API's shapes the console reads, by the names its modules import: the types generated from the route contracts
 * (console/src/api-contract.ts, `npm run docs`). Nothing here is declared by hand.
 */
export type {
  ActivityGroup,
  Case,
  CaseDetail,
  CaseEvent,
  CaseListOption,
  CaseSignal,
  MatteredSignal,
  Me,
  Payment,
  Reason,
  SignalsView,
  Verdict,
} from './api-contract.js';
