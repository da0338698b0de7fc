/**
 * The rule changes' contracts (`/api/rulesets/{name}/drafts…`; docs/governance.md): drafts of the served ruleset,
 * their backtest on past payments, the diff against the version serving, and the approval by a second lead. The
 * drafts service reads and checks the bodies itself (a ruleset document's errors named by rule and column): the
 * bodies declared here are what it takes, for the reference page and the console's types.
 * @module
 */
import { z } from 'zod';
import { MAX_RULESET_BYTES } from '../decisioning/ruleset-repository';
import { defineContract } from '../http/contract';
import { pathParam } from './common';
import { DocumentStatus } from './rollout';

/** Small bodies: a window, a comment. */
export const DRAFT_SMALL_BODY_LIMIT_BYTES = 4096;
/** A draft's body is a ruleset document. */
export const DRAFT_BODY_LIMIT_BYTES = MAX_RULESET_BYTES;

const nameParam = pathParam("The ruleset's name.");
const name = z.strictObject({ name: nameParam });
const version = z.strictObject({ name: nameParam, version: pathParam("The draft's version.") });

const ReplayedRule = z
  .strictObject({
    hits: z.number(),
    labelled: z.number().describe('Hits with a label.'),
    fraud: z.number().describe('Hits labelled fraud.'),
    precision: z.number().describe('fraud ÷ labelled (0 when none is labelled).'),
    recall: z.number().describe('fraud ÷ every labelled fraud in the window (0 when there is none).'),
  })
  .meta({ id: 'ReplayedRule', description: 'One rule of the draft over the window.' });

export const BacktestReport = z
  .strictObject({
    decisions: z.number(),
    labelled: z.number(),
    changes: z.record(z.string(), z.number()).describe('Decisions changed, by `from->to`.'),
    fraudNowCaught: z.number(),
    goodNowBlocked: z.number(),
    goodNowHeld: z.number(),
    reviewQueue: z.strictObject({
      current: z.number(),
      candidate: z.number(),
      days: z.number(),
      growthPerDay: z.number(),
    }),
    rules: z.record(z.string(), ReplayedRule).describe("The draft's rules that fired, by id."),
    firingTogether: z
      .array(z.strictObject({ rules: z.array(z.string()).describe('Two rule ids.'), count: z.number() }))
      .describe('Pairs of rules that fired on the same payment, most first.'),
    notReplayable: z
      .array(z.strictObject({ rule: z.string(), fields: z.array(z.string()) }))
      .optional()
      .describe('Rules on fields the logged decisions do not keep, left out.'),
    lists: z
      .strictObject({
        recordsWithoutMemberships: z.number(),
        currentEntries: z.array(z.string()),
        notReplayed: z.array(z.strictObject({ list: z.string(), rules: z.array(z.string()), records: z.number() })),
        useCurrentLists: z.boolean(),
      })
      .optional()
      .describe("How the draft's lists were replayed."),
    truncated: z.boolean().optional().describe('The window held more decisions than are replayed (the newest were).'),
  })
  .meta({ id: 'BacktestReport', description: "A draft's backtest figures (docs/governance.md)." });

export const DraftBacktest = z
  .strictObject({
    state: z.enum(['running', 'done', 'failed']),
    from: z.string().describe('The window, ISO 8601.'),
    to: z.string(),
    progress: z.strictObject({ replayed: z.number(), total: z.number() }).optional(),
    result: BacktestReport.optional(),
    error: z.string().optional(),
    at: z.string().describe('When it was last written, ISO 8601.'),
  })
  .meta({ id: 'DraftBacktest', description: "A draft's backtest, as stored with it." });

export const Draft = z
  .strictObject({
    name: z.string(),
    version: z.string(),
    document: z.unknown().optional().describe('The ruleset document (absent in the list).'),
    author: z.string(),
    state: z.enum(['draft', 'submitted', 'approved', 'rejected']),
    backtest: DraftBacktest.optional(),
    approver: z.string().optional(),
    comment: z.string().optional(),
    createdAt: z.string(),
    updatedAt: z.string(),
  })
  .meta({ id: 'Draft', description: 'A draft of a ruleset version.' });

export const DiffLine = z
  .strictObject({ op: z.enum(['same', 'del', 'add']), text: z.string() })
  .meta({ id: 'DiffLine', description: 'One line of a diff: kept, removed or added.' });

export const DraftDiff = z
  .strictObject({
    serving: z.string().describe('The version serving here, compared with.'),
    rules: z.array(
      z.strictObject({ id: z.string(), change: z.enum(['added', 'removed', 'changed']), lines: z.array(DiffLine) }),
    ),
    unchanged: z.number().describe('Rules neither added, removed nor changed.'),
    fields: z.array(z.strictObject({ field: z.string(), lines: z.array(DiffLine) })),
  })
  .meta({ id: 'DraftDiff', description: 'The draft against the version serving.' });

export const BacktestWindowBody = z
  .strictObject({
    from: z.string().describe('ISO 8601.'),
    to: z.string().describe('ISO 8601.'),
    useCurrentLists: z
      .boolean()
      .optional()
      .describe("Replay lists the logged decisions did not consult with today's entries."),
  })
  .meta({ id: 'BacktestWindowBody', description: 'The window of past payments to replay.' });

export const DraftCommentBody = z
  .strictObject({ comment: z.string().optional() })
  .meta({ id: 'DraftCommentBody', description: 'An optional comment.' });

export const rulesetDrafts = defineContract({
  name: 'rulesetDrafts',
  method: 'GET',
  route: 'rulesets/{name}/drafts',
  auth: 'people',
  summary: 'The newest drafts, without their documents.',
  params: name,
  status: 200,
  response: z.strictObject({ drafts: z.array(Draft) }).meta({ id: 'DraftList', description: 'The newest drafts.' }),
});

export const rulesetDraftCreate = defineContract({
  name: 'rulesetDraftCreate',
  method: 'POST',
  route: 'rulesets/{name}/drafts',
  auth: 'people',
  summary: 'A lead drafts a ruleset document (422 naming each rule and column).',
  params: name,
  body: z.record(z.string(), z.unknown()).describe('A ruleset document (docs/rules.md).'),
  bodyLimitBytes: DRAFT_BODY_LIMIT_BYTES,
  status: 201,
  response: Draft,
});

export const rulesetDraft = defineContract({
  name: 'rulesetDraft',
  method: 'GET',
  route: 'rulesets/{name}/drafts/{version}',
  auth: 'people',
  summary: 'One draft, with its document, backtest and decision.',
  params: version,
  status: 200,
  response: Draft,
});

export const rulesetDraftBacktest = defineContract({
  name: 'rulesetDraftBacktest',
  method: 'GET',
  route: 'rulesets/{name}/drafts/{version}/backtest',
  auth: 'people',
  summary: "Where the draft's backtest stands (404 when none has run).",
  params: version,
  status: 200,
  response: DraftBacktest,
});

export const rulesetDraftBacktestRun = defineContract({
  name: 'rulesetDraftBacktestRun',
  method: 'POST',
  route: 'rulesets/{name}/drafts/{version}/backtest',
  auth: 'people',
  summary: "A lead runs the draft's backtest: 200 done, or 202 running (`GET` it until done).",
  params: version,
  body: BacktestWindowBody,
  bodyLimitBytes: DRAFT_SMALL_BODY_LIMIT_BYTES,
  status: 200,
  response: DraftBacktest,
  otherAnswers: [{ status: 202, description: 'Still running: the backtest so far.' }],
});

const decision = (action: 'Submit' | 'Approve' | 'Reject', summary: string) =>
  defineContract({
    name: `rulesetDraft${action}`,
    method: 'POST',
    route: `rulesets/{name}/drafts/{version}/${action.toLowerCase()}`,
    auth: 'people',
    summary,
    params: version,
    body: DraftCommentBody,
    bodyLimitBytes: DRAFT_SMALL_BODY_LIMIT_BYTES,
    status: 200,
    response: Draft,
  });

export const rulesetDraftSubmit = decision('Submit', 'The author submits the draft for approval.');
export const rulesetDraftApprove = decision('Approve', 'Another lead than the author approves (the author: 403).');
export const rulesetDraftReject = decision('Reject', 'Another lead than the author rejects (the author: 403).');

export const rulesetDraftDiff = defineContract({
  name: 'rulesetDraftDiff',
  method: 'GET',
  route: 'rulesets/{name}/drafts/{version}/diff',
  auth: 'people',
  summary: 'Per rule what the draft adds, removes or changes against the version serving here.',
  params: version,
  status: 200,
  response: DraftDiff,
});

export const rulesetDraftPromote = defineContract({
  name: 'rulesetDraftPromote',
  method: 'POST',
  route: 'rulesets/{name}/drafts/{version}/promote',
  auth: 'people',
  summary: 'A lead promotes an approved draft (as `POST /api/rulesets/{name}/promote`, audited).',
  params: version,
  status: 200,
  response: DocumentStatus,
});

/** The rule changes' contracts, in the reference page's order. */
export const DRAFT_CONTRACTS = [
  rulesetDrafts,
  rulesetDraftCreate,
  rulesetDraft,
  rulesetDraftBacktest,
  rulesetDraftBacktestRun,
  rulesetDraftSubmit,
  rulesetDraftApprove,
  rulesetDraftReject,
  rulesetDraftDiff,
  rulesetDraftPromote,
] as const;
