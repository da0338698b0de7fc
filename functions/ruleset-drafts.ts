import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import * as c from '../lib/contracts/drafts';
import { readJsonBody } from '../lib/http/http-io';
import { route } from '../lib/http/route';

/**
 * Rule changes (docs/governance.md; lib/contracts/drafts.ts): drafts of the served ruleset, their backtest on past
 * payments, and the approval by a second lead. Who acts comes from Easy Auth's `x-ms-client-principal` (or the
 * development identity under `npm start`), as on the case API; leads draft, run backtests, submit and decide, analysts
 * read. The drafts service checks the bodies.
 */
const people = { people: peopleRoutesAuthLevel() };

type Input = { param(name: string): string | undefined };
const nameOf = (input: Input): string => input.param('name') ?? '';
const versionOf = (input: Input): string => input.param('version') ?? '';
const drafts = async () => (await sharedEngine()).drafts;

app.http(
  c.rulesetDrafts.name,
  route(
    c.rulesetDrafts,
    async (input, request) => ({ body: (await (await drafts()).list(request.headers, nameOf(input))) as never }),
    people,
  ),
);

app.http(
  c.rulesetDraftCreate.name,
  route(
    c.rulesetDraftCreate,
    async (input, request) => {
      const d = await drafts();
      const body = await readJsonBody(request, c.DRAFT_BODY_LIMIT_BYTES);
      return { body: (await d.create(request.headers, nameOf(input), body)) as never };
    },
    people,
  ),
);

app.http(
  c.rulesetDraft.name,
  route(
    c.rulesetDraft,
    async (input, request) => ({
      body: (await (await drafts()).get(request.headers, nameOf(input), versionOf(input))) as never,
    }),
    people,
  ),
);

app.http(
  c.rulesetDraftBacktest.name,
  route(
    c.rulesetDraftBacktest,
    async (input, request) => ({
      body: (await (await drafts()).backtestOf(request.headers, nameOf(input), versionOf(input))) as never,
    }),
    people,
  ),
);

app.http(
  c.rulesetDraftBacktestRun.name,
  route(
    c.rulesetDraftBacktestRun,
    async (input, request) => {
      const d = await drafts();
      const body = await readJsonBody(request, c.DRAFT_SMALL_BODY_LIMIT_BYTES);
      const r = await d.backtest(request.headers, nameOf(input), versionOf(input), body);
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
      async (input, request) => {
        const d = await drafts();
        const body = await readJsonBody(request, c.DRAFT_SMALL_BODY_LIMIT_BYTES);
        return { body: (await d[action](request.headers, nameOf(input), versionOf(input), body)) as never };
      },
      people,
    ),
  );

app.http(
  c.rulesetDraftDiff.name,
  route(
    c.rulesetDraftDiff,
    async (input, request) => ({ body: await (await drafts()).diff(request.headers, nameOf(input), versionOf(input)) }),
    people,
  ),
);

/** Through the ruleset admin's promote with its four-eyes gate and audit (a browser cannot hold its function key). */
app.http(
  c.rulesetDraftPromote.name,
  route(
    c.rulesetDraftPromote,
    async (input, request) => {
      const engine = await sharedEngine();
      const audit = engine.governance.audit;
      const admin = (actor: string) => audit.admin('ruleset', engine.rulesetAdmin, actor);
      const answer = await engine.drafts.promote(request.headers, nameOf(input), versionOf(input), admin);
      return { body: answer as never };
    },
    people,
  ),
);
