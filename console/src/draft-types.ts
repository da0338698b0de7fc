/** The shapes of the rule-change routes as the draft pages read them (docs/governance.md), and their paths. */
import { api } from './api.js';

export interface DraftBacktest {
  state: 'running' | 'done' | 'failed';
  from: string;
  to: string;
  progress?: { replayed: number; total: number };
  result?: BacktestReport;
  error?: string;
}
export interface Draft {
  name: string;
  version: string;
  document?: unknown;
  author: string;
  state: string;
  backtest?: DraftBacktest;
  approver?: string;
  comment?: string;
  createdAt: string;
  updatedAt: string;
}
export interface BacktestReport {
  decisions: number;
  labelled: number;
  changes: Record<string, number>;
  fraudNowCaught: number;
  goodNowBlocked: number;
  goodNowHeld: number;
  reviewQueue: { current: number; candidate: number; days: number; growthPerDay: number };
  rules: Record<string, { hits: number; labelled: number; fraud: number; precision: number; recall: number }>;
  firingTogether: { rules: [string, string]; count: number }[];
  notReplayable?: { rule: string; fields?: string[] }[];
  lists?: {
    recordsWithoutMemberships: number;
    currentEntries: string[];
    notReplayed: { list: string; rules: string[]; records: number }[];
  };
}
/** One line of a diff: kept, removed or added. */
export interface DiffLine {
  op: 'same' | 'del' | 'add';
  text: string;
}
/** `GET …/drafts/{version}/diff`: the draft against the version serving. */
export interface DraftDiff {
  serving: string;
  rules: { id: string; change: 'added' | 'removed' | 'changed'; lines: DiffLine[] }[];
  unchanged: number;
  fields: { field: string; lines: DiffLine[] }[];
}

/** The serving ruleset: its name, version and document. */
export function serving(): Promise<{ name: string; version: string; document: unknown }> {
  return api('insights/ruleset');
}

/** `rulesets/{name}/drafts{rest}`. */
export const draftsPath = (name: string, rest = ''): string => `rulesets/${encodeURIComponent(name)}/drafts${rest}`;
