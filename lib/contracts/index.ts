/**
 * Every declared route contract, in the reference page's order (docs/api-reference.md and
 * console/src/api-contract.ts are generated from this list: scripts/write-contracts.ts).
 * @module
 */
import type { Contract } from '../http/contract';
import { ADMIN_CONTRACTS } from './admin';
import { CASE_CONTRACTS } from './cases';
import { DRAFT_CONTRACTS } from './drafts';
import { INSIGHT_CONTRACTS } from './insights';
import { LIST_CONTRACTS } from './lists';
import { MODEL_CONTRACTS } from './models';
import { OIP_CONTRACTS } from './oip';
import { SCORE_CONTRACTS } from './score';
import { WEBHOOK_CONTRACTS } from './webhooks';

export const CONTRACTS: readonly Contract[] = [
  ...SCORE_CONTRACTS,
  ...CASE_CONTRACTS,
  ...INSIGHT_CONTRACTS,
  ...WEBHOOK_CONTRACTS,
  ...LIST_CONTRACTS,
  ...DRAFT_CONTRACTS,
  ...ADMIN_CONTRACTS,
  ...MODEL_CONTRACTS,
  ...OIP_CONTRACTS,
];
