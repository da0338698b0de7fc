/**
 * Queues and SLAs on the real PostgreSQL server (127.0.0.1:5432, database `test`, a fresh schema per run) and on
 * PGlite: a case is routed to a named queue by its rule when it is opened, with its SLA deadline; take next with a
 * filter returns only a matching case (and none when none matches); `assignee` lists an actor's cases, and a lead's
 * reassignment moves one; open cases past their SLA are counted per queue at an injected time; the analytics of a
 * small fixture (handling time, verdict mix, false-positive rate, SLA breaches, per queue and per rule). Through the
 * case service: `assignee=me`, an analyst refused another's cases, take next's query, age and SLA at an injected
 * clock, the analytics range.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { compileQueues } from '../../lib/cases/case-queues';
import { CaseService } from '../../lib/cases/case-service';
import type { CaseStore, NewCase } from '../../lib/cases/case-store';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { AppError } from '../../lib/errors/errors';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { newCase, pgliteDb, serverDb, type TestDb } from './support';
import { SHARED_WITH_CASES } from '../support/case-database';

const T0 = Date.parse('2026-12-01T08:00:00Z');
const T1 = Date.parse('2026-11-01T08:00:00Z');
const MIN = 60_000;
const HOUR = 3_600_000;

const ROUTER = compileQueues({
  queues: [
    { name: 'velocity', slaHours: 2, when: '"velocity-burst" in rules' },
    { name: 'sla-test', slaHours: 1, when: 'merchantId == "m-sla"' },
    { name: 'general', slaHours: 24 },
  ],
  default: 'general',
});

const VELOCITY = { id: 'velocity-burst', action: 'review' };
const LARGE = { id: 'large-amount-new-device', action: 'review' };

/** A case of `merchantId` firing `rules`. */
function fired(tx: string, decidedAt: number, merchantId: string, rules = [LARGE], score = 0.42): NewCase {
  return newCase(tx, decidedAt, { rules, score }, { merchantId });
}

function as(name: string, roles: readonly ('analyst' | 'lead')[] = ['analyst']): Headers {
  return new Headers({ 'x-ms-client-principal': encodePrincipal(name, roles) });
}

const round = (n: number | undefined): number | undefined =>
  n === undefined ? undefined : Math.round(n * 1000) / 1000;

for (const make of [serverDb, pgliteDb]) {
  const db: TestDb = make();
  describe(`queues and SLAs: ${db.name}`, () => {
    let store: CaseStore;
    let now = T0;
    let service: CaseService;
    before(async () => {
      store = await SqlCaseStore.create(await db.client(), ROUTER, SHARED_WITH_CASES);
      service = new CaseService({
        store,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
        wallClock: () => now,
      });
    });
    after(async () => {
      await store.dispose();
      await db.cleanup();
    });

    it('routes a case to a named queue by its rule when it is opened, with its SLA deadline from the decision', async () => {
      await store.open(
        [fired('r-1', T0, 'm-route', [VELOCITY, LARGE]), fired('r-2', T0 + MIN, 'm-route')],
        T0 + 5 * MIN,
      );
      const cases = (await store.list({ merchantId: 'm-route' }, 'oldest', 10)).cases;
      assert.deepEqual(
        cases.map((c) => [c.transactionId, c.queue, c.slaDueAt]),
        [
          ['r-1', 'velocity', new Date(T0 + 2 * HOUR).toISOString()],
          ['r-2', 'general', new Date(T0 + MIN + 24 * HOUR).toISOString()],
        ],
      );
      assert.deepEqual(
        (await store.list({ merchantId: 'm-route', queue: 'velocity' }, 'oldest', 10)).cases.map(
          (c) => c.transactionId,
        ),
        ['r-1'],
        'the list filters by queue',
      );
      assert.equal((await store.get(cases[0]?.id ?? '0'))?.case.queue, 'velocity');
    });

    it('take next with a filter returns only a matching case, and none when none matches', async () => {
      // the oldest open case is in general; the filter skips it
      await store.open(
        [
          fired('n-1', T0 - 30 * MIN, 'm-next'),
          fired('n-2', T0 - 20 * MIN, 'm-next', [VELOCITY]),
          fired('n-3', T0 - 10 * MIN, 'm-next', [VELOCITY], 0.9),
        ],
        T0,
      );
      const v = await store.next('alice', T0, { queue: 'velocity', merchantId: 'm-next' });
      assert.equal(v?.transactionId, 'n-2');
      assert.equal(v?.assignee, 'alice');
      const s = await store.next('alice', T0, { merchantId: 'm-next', minScore: 0.8 });
      assert.equal(s?.transactionId, 'n-3');
      assert.equal(await store.next('alice', T0, { queue: 'velocity', merchantId: 'm-next' }), undefined, 'none left');
      assert.equal(await store.next('alice', T0, { merchantId: 'm-next', rule: 'velocity-burst' }), undefined);
      assert.equal(await store.next('alice', T0, { merchantId: 'm-nobody' }), undefined);
      const open = (await store.list({ merchantId: 'm-next', status: 'open' }, 'oldest', 10)).cases;
      assert.deepEqual(
        open.map((c) => c.transactionId),
        ['n-1'],
        'a filter that matched nothing assigned nothing',
      );
      assert.equal(
        (await store.next('bob', T0, { merchantId: 'm-next', rule: 'large-amount-new-device' }))?.transactionId,
        'n-1',
      );
    });

    it("lists an actor's cases; a lead's reassignment moves one", async () => {
      await store.open([fired('a-1', T0, 'm-assign'), fired('a-2', T0 + 1, 'm-assign')], T0);
      const first = await store.next('carol', T0, { merchantId: 'm-assign' });
      const second = await store.next('carol', T0, { merchantId: 'm-assign' });
      const mine = async (who: string): Promise<string[]> =>
        (await store.list({ assignee: who, merchantId: 'm-assign' }, 'oldest', 10)).cases.map((c) => c.transactionId);
      assert.deepEqual(await mine('carol'), ['a-1', 'a-2']);
      const moved = await store.assign(second?.id ?? '0', 'lead-lee', 'dave', T0 + MIN);
      assert.ok(moved.ok && moved.case.assignee === 'dave');
      assert.deepEqual(moved.prior, { state: 'assigned', assignee: 'carol' }, 'the state and assignee before');
      assert.deepEqual(await mine('carol'), ['a-1']);
      assert.deepEqual(await mine('dave'), ['a-2']);
      await store.close(first?.id ?? '0', 'carol', 'fraud', undefined, T0 + MIN);
      assert.deepEqual(await mine('carol'), ['a-1'], 'a closed case stays in its assignee’s list');
      const events = (await store.get(second?.id ?? '0'))?.events ?? [];
      assert.deepEqual(events.at(-1), {
        at: new Date(T0 + MIN).toISOString(),
        actor: 'lead-lee',
        action: 'reassigned',
        detail: { assignee: 'dave' },
      });
    });

    it('counts the open cases past their SLA per queue, at the time given', async () => {
      await store.open([fired('s-1', T0, 'm-sla'), fired('s-2', T0 + 30 * MIN, 'm-sla')], T0);
      const slaTest = async (at: number): Promise<number | undefined> =>
        (await store.slaBreaches(at)).find((b) => b.queue === 'sla-test')?.count;
      assert.equal(await slaTest(T0 + 59 * MIN), undefined, 'none is due yet');
      assert.equal(await slaTest(T0 + 61 * MIN), 1);
      assert.equal(await slaTest(T0 + 91 * MIN), 2);
      const s1 = (await store.list({ merchantId: 'm-sla' }, 'oldest', 1)).cases[0];
      await store.close(s1?.id ?? '0', 'erin', 'legit', undefined, T0 + 95 * MIN);
      assert.equal(await slaTest(T0 + 100 * MIN), 1, 'a closed case is no longer counted');
    });

    it('analytics: handling time, verdict mix, false-positive rate and SLA breaches, per queue and per rule', async () => {
      await store.open(
        [
          fired('x-1', T1 - MIN, 'm-an', [VELOCITY]),
          fired('x-2', T1 - MIN, 'm-an', [VELOCITY, LARGE]),
          fired('x-3', T1 - MIN, 'm-an', [LARGE]),
          fired('x-4', T1 - MIN, 'm-an', [LARGE]),
        ],
        T1,
      );
      const ids = new Map(
        (await store.list({ merchantId: 'm-an' }, 'oldest', 10)).cases.map((c) => [c.transactionId, c.id]),
      );
      await store.close(ids.get('x-1') ?? '0', 'f', 'fraud', undefined, T1 + HOUR);
      await store.close(ids.get('x-2') ?? '0', 'f', 'legit', undefined, T1 + 3 * HOUR); // past its 2 h SLA
      await store.close(ids.get('x-3') ?? '0', 'f', 'legit', undefined, T1 + 2 * HOUR);
      const a = await store.analytics(T1, T1 + 24 * HOUR);
      const shape = (g: (typeof a)['total']): unknown[] => [
        g.closed,
        g.fraud,
        g.legit,
        round(g.falsePositiveRate ?? undefined),
        round(g.handlingSeconds?.median),
        round(g.handlingSeconds?.p90),
        g.slaBreached,
      ];
      assert.deepEqual(shape(a.total), [3, 1, 2, 0.667, 7200, 10080, 1]);
      assert.deepEqual(
        a.byQueue.map((g) => [g.queue, ...shape(g)]),
        [
          ['velocity', 2, 1, 1, 0.5, 7200, 10080, 1],
          ['general', 1, 0, 1, 1, 7200, 7200, 0],
        ],
      );
      assert.deepEqual(
        a.byRule.map((g) => [g.rule, ...shape(g)]),
        [
          ['large-amount-new-device', 2, 0, 2, 1, 9000, 10440, 1],
          ['velocity-burst', 2, 1, 1, 0.5, 7200, 10080, 1],
        ],
      );
      const late = await store.analytics(T1 + 2.5 * HOUR, T1 + 24 * HOUR);
      assert.deepEqual(shape(late.total), [1, 0, 1, 1, 10800, 10800, 1], 'only x-2 closed in the range');
      const none = await store.analytics(T1 - 48 * HOUR, T1 - 24 * HOUR);
      assert.deepEqual(none, {
        total: { closed: 0, fraud: 0, legit: 0, falsePositiveRate: null, handlingSeconds: null, slaBreached: 0 },
        byQueue: [],
        byRule: [],
      });
    });

    it('the service: assignee=me, another analyst’s cases need a lead, take next reads its query, age and SLA at the clock', async () => {
      now = T0 + HOUR;
      await store.open([fired('v-1', T0, 'm-svc', [VELOCITY]), fired('v-2', T0 + 1, 'm-svc')], T0);
      const taken = await service.next(as('gina'), new URLSearchParams('queue=velocity&merchantId=m-svc'));
      assert.equal(taken?.transactionId, 'v-1');
      assert.deepEqual([taken?.ageSeconds, taken?.slaBreached], [3600, false]);
      await assert.rejects(
        service.next(as('gina'), new URLSearchParams('status=open')),
        (e) => e instanceof AppError && e.code === 'validation_failed' && e.errors[0]?.path === 'status',
      );
      const mine = await service.list(as('gina'), new URLSearchParams('assignee=me'));
      assert.deepEqual(
        mine.cases.map((c) => c.transactionId),
        ['v-1'],
      );
      assert.deepEqual((await service.list(as('hank'), new URLSearchParams('assignee=me'))).cases, [], 'hank has none');
      await assert.rejects(
        service.list(as('hank'), new URLSearchParams('assignee=gina')),
        (e) => e instanceof AppError && e.code === 'forbidden',
      );
      const byLead = await service.list(as('lena', ['lead']), new URLSearchParams('assignee=gina'));
      assert.deepEqual(
        byLead.cases.map((c) => c.transactionId),
        ['v-1'],
      );
      now = T0 + 3 * HOUR; // past velocity's 2 h
      const late = (await service.get(as('gina'), taken?.id)).case;
      assert.deepEqual([late.ageSeconds, late.slaBreached, late.queue], [3 * 3600, true, 'velocity']);
      const v2 = (await service.list(as('gina'), new URLSearchParams('merchantId=m-svc&queue=general'))).cases[0];
      assert.deepEqual([v2?.transactionId, v2?.slaBreached], ['v-2', false], 'general has 24 h');
      const a = await service.analytics(
        as('gina'),
        new URLSearchParams('from=2026-10-31T00:00:00Z&to=2026-11-03T00:00:00Z'),
      );
      assert.equal(a.from, '2026-10-31T00:00:00.000Z');
      assert.equal(a.total.closed, 3, 'the analytics fixture');
    });
  });
}
