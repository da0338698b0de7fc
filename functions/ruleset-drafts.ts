import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest } from '@azure/functions';
import { peopleRoutesAuthLevel, sharedEngine } from '../lib/app';
import { MAX_RULESET_BYTES } from '../lib/decisioning/ruleset-repository';
import { jsonResponse, readJsonBody, withProblems } from '../lib/http/http-io';

/**
 * Rule changes (docs/governance.md): drafts of the served ruleset, their backtest on past payments, and the
 * approval by a second lead. Who acts comes from Easy Auth's `x-ms-client-principal` (or the development identity
 * under `npm start`), as on the case API; leads draft, run backtests, submit and decide, analysts read.
 */
const authLevel = peopleRoutesAuthLevel();

/** Small bodies: a window, a comment. */
const SMALL_BODY_LIMIT_BYTES = 4096;

const nameOf = (r: HttpRequest): string => r.params['name'] ?? '';
const versionOf = (r: HttpRequest): string => r.params['version'] ?? '';

/** GET: the newest drafts (no documents). POST with a ruleset document: a new draft (201), or 422 naming each rule and column. */
app.http('rulesetDrafts', {
  route: 'rulesets/{name}/drafts',
  methods: ['GET', 'POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const drafts = (await sharedEngine()).drafts;
    if (request.method === 'GET') return jsonResponse(200, await drafts.list(request.headers, nameOf(request)));
    const body = await readJsonBody(request, MAX_RULESET_BYTES);
    return jsonResponse(201, await drafts.create(request.headers, nameOf(request), body));
  }),
});

/** GET: one draft, with its document, backtest and decision. */
app.http('rulesetDraft', {
  route: 'rulesets/{name}/drafts/{version}',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).drafts.get(request.headers, nameOf(request), versionOf(request))),
  ),
});

/** POST `{ from, to }`: runs the draft's backtest (200 done, or 202 running); GET: where it stands. */
app.http('rulesetDraftBacktest', {
  route: 'rulesets/{name}/drafts/{version}/backtest',
  methods: ['GET', 'POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const drafts = (await sharedEngine()).drafts;
    if (request.method === 'GET')
      return jsonResponse(200, await drafts.backtestOf(request.headers, nameOf(request), versionOf(request)));
    const body = await readJsonBody(request, SMALL_BODY_LIMIT_BYTES);
    const r = await drafts.backtest(request.headers, nameOf(request), versionOf(request), body);
    return jsonResponse(r.status, r.backtest);
  }),
});

/** POST `{ comment? }`: submit for approval; approve or reject (another lead than the author: the author's is 403). */
for (const action of ['submit', 'approve', 'reject'] as const)
  app.http(`rulesetDraft${action[0]?.toUpperCase()}${action.slice(1)}`, {
    route: `rulesets/{name}/drafts/{version}/${action}`,
    methods: ['POST'],
    authLevel,
    handler: withProblems(async (request) => {
      const drafts = (await sharedEngine()).drafts;
      const body = await readJsonBody(request, SMALL_BODY_LIMIT_BYTES);
      return jsonResponse(200, await drafts[action](request.headers, nameOf(request), versionOf(request), body));
    }),
  });

/** GET: per rule what the draft adds, removes or changes against the version serving here, with the changed lines. */
app.http('rulesetDraftDiff', {
  route: 'rulesets/{name}/drafts/{version}/diff',
  methods: ['GET'],
  authLevel,
  handler: withProblems(async (request) =>
    jsonResponse(200, await (await sharedEngine()).drafts.diff(request.headers, nameOf(request), versionOf(request))),
  ),
});

/**
 * POST: a lead promotes an approved draft, through the ruleset admin's promote with its four-eyes gate and audit
 * (as `POST /api/rulesets/{name}/promote`, whose function key a browser cannot hold).
 */
app.http('rulesetDraftPromote', {
  route: 'rulesets/{name}/drafts/{version}/promote',
  methods: ['POST'],
  authLevel,
  handler: withProblems(async (request) => {
    const engine = await sharedEngine();
    const audit = engine.governance.audit;
    const admin = (actor: string) => audit.admin('ruleset', engine.rulesetAdmin, actor);
    return jsonResponse(200, await engine.drafts.promote(request.headers, nameOf(request), versionOf(request), admin));
  }),
});
