/**
 * The audit decorators over a real trail (PGlite in a temporary folder): each admin change of a model or ruleset
 * (promote, rollback, traffic) and each request four-eyes keeps for a second lead, each list add and remove, each upload outcome, each case verdict and reassignment appends one entry
 * with its actor and the old and new values; a failed change records nothing; status and pages pass through; an entry
 * that cannot be recorded answers 503 and logs an error naming it; without a trail everything passes through and the
 * trail answers 404; `actorOf` reads a principal only where the identity mode trusts it.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { AssignChange, Lookup, VerdictChange, VerdictStep } from '../../lib/cases/case-service';
import type { Case } from '../../lib/cases/case-store';
import { migrate } from '../../lib/platform/sql/migrate';
import { CASE_DATABASE } from '../support/case-database';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { AppError } from '../../lib/errors/errors';
import { Audit, type ListsAdmin } from '../../lib/governance/audit';
import type { AuditEvent, AuditLog } from '../../lib/governance/audit-log';
import { SqlAuditLog } from '../../lib/governance/sql-audit-log';
import { AwaitingApproval, type ArtifactAdmin } from '../../lib/http/admin-routes';
import { Identity, type IdentitySettings } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import type { Logger } from '../../lib/platform/logger';
import { AdminBodies } from '../../lib/rollout/admin-bodies';
import { FourEyes, type ApprovalState } from '../../lib/rollout/four-eyes';
import { MemoryPointerStore } from '../../lib/rollout/pointer-store';
import { pgliteDb } from '../cases/support';
import { FakeClock } from '../support/clock';

const T0 = Date.parse('2026-12-01T10:00:00.000Z');

function identity(mode: IdentitySettings['mode']): Identity {
  return new Identity({ mode, devActor: { name: 'dev', roles: ['analyst', 'lead'] } });
}

function headers(h: Record<string, string> = {}): Lookup {
  return { get: (k: string) => h[k.toLowerCase()] ?? null };
}

const as = (name: string, roles: string[] = ['lead']): Lookup =>
  headers({ 'x-ms-client-principal': encodePrincipal(name, roles) });

function recordingLogger(): Logger & { errors: { msg: string; fields: unknown }[] } {
  const errors: { msg: string; fields: unknown }[] = [];
  const none = (): void => undefined;
  return { debug: none, info: none, warn: none, error: (msg, fields) => errors.push({ msg, fields }), errors };
}

/** A model rollout's admin in memory, answering with its status view (with things the audit must drop). */
function fakeModels(): ArtifactAdmin {
  let active = '1.0.0';
  let previous: string | undefined;
  let candidate: { version: string; canaryPercent: number; shadowPercent: number } | undefined;
  const view = (): unknown => ({
    name: 'fraud',
    generation: 1,
    active: { version: active, by: 'i1', at: '2026-01-01T00:00:00.000Z' },
    candidate,
    previous: previous === undefined ? undefined : { version: previous },
    history: previous === undefined ? [] : [{ version: previous }],
    rejections: [],
    shadow: { bins: [1, 2, 3] },
    fleet: { versions: [{ version: active, sha256: 'abc' }], instances: [{ id: 'i1' }] },
  });
  return {
    status: () => Promise.resolve(view()),
    promote: (_n, body) => {
      const v = (body as { version: string }).version;
      if (v === 'nope') return Promise.reject(new AppError('conflict', 'not validated'));
      previous = active;
      active = v;
      candidate = undefined;
      return Promise.resolve(view());
    },
    rollback: () => {
      if (previous === undefined) return Promise.reject(new AppError('conflict', 'nothing to roll back to'));
      [active, previous, candidate] = [previous, undefined, undefined];
      return Promise.resolve(view());
    },
    traffic: (_n, body) => {
      candidate = body as typeof candidate;
      return Promise.resolve(view());
    },
  };
}

/** A ruleset rollout's admin in memory, answering with every kind's status view. */
function fakeRulesets(): ArtifactAdmin {
  let state = {
    generation: 1,
    active: '1.0.0' as string | undefined,
    previous: [] as string[],
    traffic: undefined as unknown,
  };
  const split = (): { candidate: string; canaryPercent: number; shadowPercent: number } | undefined =>
    state.traffic as never;
  const view = (): unknown => {
    const t = split();
    return {
      name: 'fraud-rules',
      generation: state.generation,
      serving: state.active,
      active: state.active === undefined ? undefined : { version: state.active },
      candidate:
        t === undefined
          ? undefined
          : { version: t.candidate, canaryPercent: t.canaryPercent, shadowPercent: t.shadowPercent },
      previous: state.previous[0] === undefined ? undefined : { version: state.previous[0] },
      history: state.previous.map((version) => ({ version })),
      rejections: [],
      shadow: { n: 5 },
    };
  };
  return {
    status: () => Promise.resolve(view()),
    promote: (_n, body) => {
      const v = (body as { version: string }).version;
      state = { ...state, active: v, previous: [state.active ?? '', ...state.previous], traffic: undefined };
      return Promise.resolve(view());
    },
    rollback: () => {
      const [p, ...rest] = state.previous;
      state = { ...state, active: p, previous: rest, traffic: undefined };
      return Promise.resolve(view());
    },
    traffic: (_n, body) => {
      state = { ...state, traffic: body };
      return Promise.resolve(view());
    },
  };
}

function fakeLists(): ListsAdmin & { entries: Set<string> } {
  const entries = new Set<string>();
  return {
    entries,
    listPage: () => Promise.resolve({ values: [...entries] }),
    addToList: (name, body) => {
      const values = (body as { values: unknown[] }).values;
      if (values.some((v) => typeof v !== 'string'))
        return Promise.reject(
          new AppError('validation_failed', 'bad', { errors: [{ path: 'values.0', message: 'x' }] }),
        );
      for (const v of values as string[]) entries.add(v);
      return Promise.resolve({ name, added: values.length });
    },
    removeFromList: (name, value) => {
      if (!entries.delete(value)) return Promise.reject(new AppError('not_found', 'absent'));
      return Promise.resolve({ name, removed: 1 });
    },
  };
}

describe('audit decorators over a PGlite trail', () => {
  const db = pgliteDb();
  let sql: SqlClient;
  const clock = new FakeClock(T0);
  let audit: Audit;
  let logger: ReturnType<typeof recordingLogger>;
  let log: SqlAuditLog;
  const newest = async (n: number, filter: { kind?: AuditEvent['kind']; name?: string } = {}): Promise<AuditEvent[]> =>
    (await log.list({ ...filter, limit: n })).events;
  const bare = (e: AuditEvent | undefined): unknown => ({
    actor: e?.actor,
    kind: e?.kind,
    name: e?.name,
    action: e?.action,
    oldValue: e?.oldValue,
    newValue: e?.newValue,
  });

  before(async () => {
    sql = await db.client();
    await migrate(sql, CASE_DATABASE);
    log = new SqlAuditLog({ sql: () => sql, wallClock: () => clock.tick() });
    logger = recordingLogger();
    audit = new Audit({ log, identity: identity('development'), logger });
  });
  after(async () => {
    await sql.dispose();
    await db.cleanup();
  });

  it('records a model promote, traffic and rollback with the pointer before and after, not the status', async () => {
    const models = audit.admin('model', fakeModels(), 'alice');
    await models.promote('fraud', { version: '1.1.0' });
    await models.traffic('fraud', { version: '1.2.0', canaryPercent: 10, shadowPercent: 5 });
    await models.rollback('fraud');
    const [rollback, traffic, promote] = await newest(3, { kind: 'model' });
    assert.deepEqual(bare(promote), {
      actor: 'alice',
      kind: 'model',
      name: 'fraud',
      action: 'promote',
      oldValue: { active: '1.0.0', previous: null, candidate: null },
      newValue: { active: '1.1.0', previous: '1.0.0', candidate: null },
    });
    assert.deepEqual(bare(traffic), {
      actor: 'alice',
      kind: 'model',
      name: 'fraud',
      action: 'traffic',
      oldValue: { active: '1.1.0', previous: '1.0.0', candidate: null },
      newValue: {
        active: '1.1.0',
        previous: '1.0.0',
        candidate: { version: '1.2.0', canaryPercent: 10, shadowPercent: 5 },
      },
    });
    assert.equal(rollback?.action, 'rollback');
    assert.deepEqual(rollback?.newValue, { active: '1.0.0', previous: null, candidate: null });
  });

  it('records a ruleset promote, traffic and rollback from its pointer', async () => {
    const rulesets = audit.admin('ruleset', fakeRulesets(), 'bob');
    await rulesets.promote('fraud-rules', { version: '1.1.0' });
    await rulesets.traffic('fraud-rules', { candidate: '1.2.0', canaryPercent: 20, shadowPercent: 0 });
    await rulesets.rollback('fraud-rules');
    const [rollback, traffic, promote] = await newest(3, { kind: 'ruleset' });
    assert.deepEqual(bare(promote), {
      actor: 'bob',
      kind: 'ruleset',
      name: 'fraud-rules',
      action: 'promote',
      oldValue: { active: '1.0.0', previous: null, candidate: null },
      newValue: { active: '1.1.0', previous: '1.0.0', candidate: null },
    });
    assert.deepEqual(traffic?.newValue, {
      active: '1.1.0',
      previous: '1.0.0',
      candidate: { version: '1.2.0', canaryPercent: 20, shadowPercent: 0 },
    });
    assert.deepEqual(bare(rollback), {
      actor: 'bob',
      kind: 'ruleset',
      name: 'fraud-rules',
      action: 'rollback',
      oldValue: {
        active: '1.1.0',
        previous: '1.0.0',
        candidate: { version: '1.2.0', canaryPercent: 20, shadowPercent: 0 },
      },
      newValue: { active: '1.0.0', previous: null, candidate: null },
    });
  });

  it("records a lead's request kept for a second lead (four-eyes), then the change by the second lead", async () => {
    const eyes = new FourEyes({
      kind: 'model',
      store: new MemoryPointerStore<ApprovalState>(),
      bodies: new AdminBodies(/^[0-9.]+$/, '1.2.0'),
      wallNow: () => T0,
    });
    const as = (lead: string): ArtifactAdmin =>
      audit.requests(
        'model',
        eyes.admin(audit.admin('model', fakeModels(), lead), () => lead),
        () => lead,
      );
    const first = await as('dora').promote('fraud', { version: '1.1.0' });
    assert.ok(first instanceof AwaitingApproval);
    const [request] = await newest(1, { kind: 'model' });
    assert.deepEqual(bare(request), {
      actor: 'dora',
      kind: 'model',
      name: 'fraud',
      action: 'request-promote',
      oldValue: null,
      newValue: { change: 'promote', version: '1.1.0', requestedBy: 'dora', at: new Date(T0).toISOString() },
    });
    await as('ed').promote('fraud', { version: '1.1.0' });
    const [promote] = await newest(1, { kind: 'model' });
    assert.deepEqual([promote?.actor, promote?.action], ['ed', 'promote']);
  });

  it('records nothing for a failed change or a status read', async () => {
    const before = (await newest(200)).length;
    const models = audit.admin('model', fakeModels(), 'alice');
    await assert.rejects(models.promote('fraud', { version: 'nope' }), /not validated/);
    await assert.rejects(models.rollback('fraud'), /nothing to roll back to/);
    await models.status('fraud');
    const lists = audit.lists(fakeLists(), 'alice');
    await assert.rejects(lists.addToList('blocked_users', { values: [7] }), /bad/);
    await assert.rejects(lists.removeFromList('blocked_users', 'absent'), /absent/);
    await lists.listPage('blocked_users', undefined);
    assert.equal((await newest(200)).length, before);
  });

  it('records a list add with its entries and ttl, and a remove with its entry', async () => {
    const lists = audit.lists(fakeLists(), 'carol');
    assert.deepEqual(await lists.addToList('blocked_users', { values: ['u1', 'u2'], ttlSeconds: 3600 }), {
      name: 'blocked_users',
      added: 2,
    });
    await lists.removeFromList('blocked_users', 'u1');
    const [remove, add] = await newest(2, { kind: 'list' });
    assert.deepEqual(bare(add), {
      actor: 'carol',
      kind: 'list',
      name: 'blocked_users',
      action: 'add',
      oldValue: null,
      newValue: { values: ['u1', 'u2'], ttlSeconds: 3600 },
    });
    assert.deepEqual(bare(remove), {
      actor: 'carol',
      kind: 'list',
      name: 'blocked_users',
      action: 'remove',
      oldValue: { value: 'u1' },
      newValue: null,
    });
  });

  it('records model and ruleset uploads as blob-upload with their outcome', async () => {
    await audit.upload('model', {
      kind: 'published',
      name: 'fraud',
      version: '2.0.0',
      mode: 'candidate',
      generation: 4,
    });
    await audit.upload('ruleset', { kind: 'unchanged', name: 'fraud-rules', version: '1.1.0' });
    await audit.upload('ruleset', {
      kind: 'rejected',
      rejection: {
        name: 'fraud-rules',
        version: '9.0.0',
        blobPath: 'rulesets/fraud-rules/9.0.0.json',
        check: 'compile',
        code: 'validation_failed',
        reason: 'rule r1 does not compile',
        errors: [],
        at: '2026-12-01T10:00:00.000Z',
      },
    } as never);
    const [rejected, unchanged, published] = await newest(3, {});
    assert.deepEqual(bare(published), {
      actor: 'blob-upload',
      kind: 'model',
      name: 'fraud',
      action: 'upload',
      oldValue: null,
      newValue: { outcome: 'published', version: '2.0.0', mode: 'candidate', generation: 4 },
    });
    assert.deepEqual(unchanged?.newValue, { outcome: 'unchanged', version: '1.1.0' });
    assert.deepEqual(bare(rejected), {
      actor: 'blob-upload',
      kind: 'ruleset',
      name: 'fraud-rules',
      action: 'upload',
      oldValue: null,
      newValue: {
        outcome: 'rejected',
        version: '9.0.0',
        check: 'compile',
        code: 'validation_failed',
        reason: 'rule r1 does not compile',
      },
    });
  });

  it('records a case verdict in its own transaction, with the prior state and assignee, never the payment', async () => {
    const closed = { id: '42', state: 'closed', payment: { userId: 'user-secret', cardFingerprint: 'card-secret' } };
    const label = {
      transactionId: 'tx-42',
      label: 'fraud',
      reportedAt: '2026-12-01T10:00:00.000Z',
      source: 'case',
    } as const;
    const change: VerdictChange = {
      case: closed as unknown as Case,
      label,
      actor: 'erin',
      prior: { state: 'assigned', assignee: 'erin' },
      verdict: 'fraud',
      reason: 'confirmed by the cardholder',
      list: 'blocked_users',
      repeated: false,
    };
    let steps = 0;
    const cases = {
      // the case store runs the step in the verdict's transaction; here a transaction that rolls back when told
      verdictChange: async (_h: Lookup, _id: string | undefined, body: unknown, step?: VerdictStep) => {
        await sql
          .transaction(async (tx) => {
            steps++;
            await step?.(tx, change);
            if (body === 'fail after the entry') throw new Error('the update failed');
          })
          .catch((e: unknown) => {
            if (body !== 'fail after the entry') throw e;
          });
        return change;
      },
    };
    const before = (await newest(100, { kind: 'case' })).length;
    await audit.verdict(cases, as('erin'), '42', 'fail after the entry');
    assert.equal((await newest(100, { kind: 'case' })).length, before, 'a rolled-back verdict leaves no entry');
    const answer = await audit.verdict(cases, as('erin'), '42', {});
    assert.equal(steps, 2, 'the entry is written through the step, in the transaction');
    assert.deepEqual(answer, { case: closed, label });
    const [e] = await newest(1, { kind: 'case' });
    assert.deepEqual(bare(e), {
      actor: 'erin',
      kind: 'case',
      name: '42',
      action: 'verdict',
      oldValue: { state: 'assigned', assignee: 'erin' },
      newValue: { state: 'closed', verdict: 'fraud', reason: 'confirmed by the cardholder', list: 'blocked_users' },
    });
    assert.doesNotMatch(JSON.stringify(e), /secret/);
  });

  it('records a reassignment after it, with the prior state and assignee; a refused one records nothing', async () => {
    const moved = { id: '43', state: 'assigned', assignee: 'frank', payment: { userId: 'user-secret' } };
    const change: AssignChange = {
      case: moved as unknown as Case,
      actor: 'lena',
      prior: { state: 'assigned', assignee: 'erin' },
    };
    const cases = {
      assignChange: (_h: Lookup, id: string | undefined): Promise<AssignChange> =>
        id === '43' ? Promise.resolve(change) : Promise.reject(new AppError('conflict', 'The case is closed.')),
    };
    const before = (await newest(100, { kind: 'case' })).length;
    await assert.rejects(audit.assign(cases, as('lena'), '44', {}), AppError);
    assert.equal((await newest(100, { kind: 'case' })).length, before, 'a refused reassignment records nothing');
    assert.deepEqual(await audit.assign(cases, as('lena'), '43', {}), moved);
    const [e] = await newest(1, { kind: 'case' });
    assert.deepEqual(bare(e), {
      actor: 'lena',
      kind: 'case',
      name: '43',
      action: 'assign',
      oldValue: { state: 'assigned', assignee: 'erin' },
      newValue: { state: 'assigned', assignee: 'frank' },
    });
    assert.doesNotMatch(JSON.stringify(e), /secret/);
  });

  it('lists the trail for a lead only, and names every bad parameter', async () => {
    const q = (s: string): Lookup => new URLSearchParams(s);
    const page = await audit.list(as('lead-1'), q('kind=list&limit=1'));
    assert.equal(page.events.length, 1);
    assert.equal(typeof page.cursor, 'string');
    await assert.rejects(
      audit.list(as('analyst-1', ['analyst']), q('')),
      (e: unknown) => e instanceof AppError && e.code === 'forbidden',
    );
    await assert.rejects(
      audit.list(as('lead-1'), q('kind=rocket&limit=0&from=yesterday')),
      (e: unknown) =>
        e instanceof AppError &&
        e.code === 'validation_failed' &&
        JSON.stringify(e.errors.map((x) => x.path).sort()) === JSON.stringify(['from', 'kind', 'limit']),
    );
  });
});

describe('audit when the entry cannot be recorded, and without a trail', () => {
  const failing: AuditLog = {
    record: () => Promise.reject(new AppError('dependency_unavailable', 'The audit database is unavailable.')),
    recordIn: () => Promise.reject(new Error('insert into audit_events failed')),
    list: () => Promise.reject(new AppError('dependency_unavailable', 'The audit database is unavailable.')),
  };

  it('answers 503 after the change and logs an error naming the entry', async () => {
    const logger = recordingLogger();
    const audit = new Audit({ log: failing, identity: identity('development'), logger });
    const lists = fakeLists();
    await assert.rejects(
      audit.lists(lists, 'alice').addToList('blocked_users', { values: ['u9'] }),
      (e: unknown) => e instanceof AppError && e.code === 'dependency_unavailable' && e.status === 503,
    );
    assert.ok(lists.entries.has('u9'), 'the change was made');
    assert.equal(logger.errors.length, 1);
    assert.match(logger.errors[0]?.msg ?? '', /could not be recorded/);
    assert.deepEqual(
      { ...(logger.errors[0]?.fields as Record<string, unknown>), error: undefined },
      { kind: 'list', name: 'blocked_users', action: 'add', actor: 'alice', error: undefined },
    );
  });

  it('refuses a verdict whose entry cannot be written in its transaction: 503, the error thrown into it, logged', async () => {
    const logger = recordingLogger();
    const audit = new Audit({ log: failing, identity: identity('development'), logger });
    let thrownInside: unknown;
    const cases = {
      verdictChange: async (_h: Lookup, _id: string | undefined, _b: unknown, step?: VerdictStep) => {
        const change = {
          case: { id: '7' },
          actor: 'erin',
          prior: { state: 'open' },
          verdict: 'legit',
        } as VerdictChange;
        try {
          await step?.({ query: () => Promise.resolve([]) }, change);
        } catch (e) {
          thrownInside = e; // the case store rolls the verdict back and rethrows
          throw e;
        }
        return change;
      },
    };
    await assert.rejects(
      audit.verdict(cases, as('erin'), '7', {}),
      (e: unknown) => e instanceof AppError && e.code === 'dependency_unavailable' && e.status === 503,
    );
    assert.ok(thrownInside instanceof AppError, 'the failure is thrown inside the transaction, which rolls back');
    assert.equal(logger.errors.length, 1);
    assert.match(logger.errors[0]?.msg ?? '', /verdict was refused/);
    assert.deepEqual(
      { ...(logger.errors[0]?.fields as Record<string, unknown>), error: undefined },
      { kind: 'case', name: '7', action: 'verdict', actor: 'erin', error: undefined },
    );
  });

  it('passes through without recording and answers 404 on the trail without a case database', async () => {
    const audit = new Audit({ log: undefined, identity: identity('development'), logger: recordingLogger() });
    assert.equal(audit.enabled, false);
    const models = audit.admin('model', fakeModels(), 'alice');
    assert.deepEqual(pick(await models.promote('fraud', { version: '1.1.0' })), '1.1.0');
    await audit.upload('model', { kind: 'unchanged', name: 'fraud', version: '1.1.0' });
    await assert.rejects(
      audit.list(as('lead-1'), new URLSearchParams('')),
      (e: unknown) => e instanceof AppError && e.code === 'not_found' && /case database/.test(e.message),
    );
  });

  it('reads the actor of an admin call from a principal only where the identity mode reads principals', () => {
    const log = undefined;
    const logger = recordingLogger();
    const principal = as('frank');
    assert.equal(new Audit({ log, identity: identity('easyauth'), logger }).actorOf(principal), 'frank');
    assert.equal(new Audit({ log, identity: identity('development'), logger }).actorOf(principal), 'frank');
    assert.equal(new Audit({ log, identity: identity('disabled'), logger }).actorOf(principal), 'admin-key');
    assert.equal(new Audit({ log, identity: identity('easyauth'), logger }).actorOf(headers()), 'admin-key');
    assert.equal(
      new Audit({ log, identity: identity('easyauth'), logger }).actorOf(headers({ 'x-ms-client-principal': '!!' })),
      'admin-key',
    );
  });
});

function pick(status: unknown): unknown {
  return (status as { active?: { version?: string } }).active?.version;
}
