import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, subsystems } from '../lib/app';
import * as c from '../lib/contracts/drafts';
import { readJsonBody } from '../lib/http/http-io';
import { route } from '../lib/http/route';

/**
 * Rule changes (docs/governance.md; lib/contracts/drafts.ts): drafts of the served ruleset, their backtest on past
 * payments, and the approval by a second lead. Who acts comes from Easy Auth's `x-ms-client-principal` (or the
 * development identity under `npm start`), as on the case API; leads draft, run backtests, submit and decide, analysts
 * read. The drafts service checks the bodies. Without a ruleset (`RULESET_NAME=none`) or a case database
 * (`CASE_STORE=none`) drafts are off: every route answers 404, decided when the functions register.
 */
const people = { people: peopleRoutesAuthLevel(), uses: subsystems('drafts') };

type Input = { param(name: string): string | undefined };
const nameOf = (input: Input): string => input.param('name') ?? '';
const versionOf = (input: Input): string => input.param('version') ?? '';

app.http(
  c.rulesetDrafts.name,
  route(
    c.rulesetDrafts,
    async (input, { drafts }, request) => ({ body: (await drafts.list(request.headers, nameOf(input))) as never }),
    people,
  ),
);

app.http(
  c.rulesetDraftCreate.name,
  route(
    c.rulesetDraftCreate,
    async (input, { drafts }, request) => {
      const body = await readJsonBody(request, c.DRAFT_BODY_LIMIT_BYTES);
      return { body: (await drafts.create(request.headers, nameOf(input), body)) as never };
    },
    people,
  ),
);

app.http(
  c.rulesetDraft.name,
  route(
    c.rulesetDraft,
    async (input, { drafts }, request) => ({
      body: (await drafts.get(request.headers, nameOf(input), versionOf(input))) as never,
    }),
    people,
  ),
);

app.http(
  c.rulesetDraftBacktest.name,
  route(
    c.rulesetDraftBacktest,
    async (input, { drafts }, request) => ({
      body: (await drafts.backtestOf(request.headers, nameOf(input), versionOf(input))) as never,
    }),
    people,
  ),
);

app.http(
  c.rulesetDraftBacktestRun.name,
  route(
    c.rulesetDraftBacktestRun,
    async (input, { drafts }, request) => {
      const body = await readJsonBody(request, c.DRAFT_SMALL_BODY_LIMIT_BYTES);
      const r = await drafts.backtest(request.headers, nameOf(input), versionOf(input), body);
      return { status: r.status, body: r.backtest as never };
    },
    people,
  ),
);

for (const [contract, action] of [
  [c.rulesetDraftSubmit, 'submit'],
  [c.rulesetDraftApprove, 'approve'],
  [c.rulesetDraftReject, 'reject'],
] as const)
  app.http(
    contract.name,
    route(
      contract,
      async (input, { drafts }, request) => {
        const body = await readJsonBody(request, c.DRAFT_SMALL_BODY_LIMIT_BYTES);
        return { body: (await drafts[action](request.headers, nameOf(input), versionOf(input), body)) as never };
      },
      people,
    ),
  );

app.http(
  c.rulesetDraftDiff.name,
  route(
    c.rulesetDraftDiff,
    async (input, { drafts }, request) => ({
      body: await drafts.diff(request.headers, nameOf(input), versionOf(input)),
    }),
    people,
  ),
);

/** Through the ruleset admin's promote with its four-eyes gate and audit (a browser cannot hold its function key). */
app.http(
  c.rulesetDraftPromote.name,
  route(
    c.rulesetDraftPromote,
    async (input, { drafts, governance, rulesetAdmin }, request) => {
      const admin = (actor: string) => governance.audit.admin('ruleset', rulesetAdmin, actor);
      const answer = await drafts.promote(request.headers, nameOf(input), versionOf(input), admin);
      return { body: answer as never };
    },
    { people: people.people, uses: subsystems('drafts', 'governance', 'rulesetAdmin') },
  ),
);
