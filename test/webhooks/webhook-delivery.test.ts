/**
 * Webhook delivery end to end on the real PostgreSQL server (a fresh schema) and on PGlite, with a receiver on
 * loopback: a held payment's case opening sends `review.opened`, its verdict `review.closed`, both with valid Standard
 * Webhooks signatures and a payload without personal data. With the receiver down for 30 s (the clock is advanced,
 * nothing waits), the deliveries arrive afterwards: none lost, none twice by `webhook-id`, and a case's `closed`
 * never before its `opened`. A delivery failing past its window is dead-lettered with the later events of its case,
 * listed, and redelivered in order. The API: leads only, secrets never listed, rotation signs with every active secret.
 */
import assert from 'node:assert/strict';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, beforeEach, describe, it } from 'node:test';
import { Webhook } from 'standardwebhooks';
import type { SqlClient } from '../../lib/platform/sql/sql-client';
import { SqlCaseStore } from '../../lib/cases/sql-case-store';
import { AppError } from '../../lib/errors/errors';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { unrefTimers } from '../../lib/platform/timers';
import { DEFAULT_BACKOFF } from '../../lib/webhooks/webhook-backoff';
import { WebhookEndpoints } from '../../lib/webhooks/webhook-endpoints';
import { WebhookRelay, type TopicPublisher, type WebhookRelayEvents } from '../../lib/webhooks/webhook-relay';
import { WebhookService, type WebhookAuditEntry } from '../../lib/webhooks/webhook-service';
import { eventually } from '../support/eventually';
import { newCase, pgliteDb, serverDb, type TestDb } from '../cases/support';
import { SHARED_WITH_CASES } from '../support/case-database';

interface Received {
  readonly path: string;
  readonly headers: IncomingHttpHeaders;
  readonly body: string;
}

/** A webhook receiver on loopback that can be stopped and started again on its port, and fail a path. */
async function receiver(): Promise<{
  url: (path: string) => string;
  got: Received[];
  failing: Set<string>;
  stop(): Promise<void>;
  start(): Promise<void>;
}> {
  const got: Received[] = [];
  const failing = new Set<string>();
  let port = 0;
  let server: Server | undefined;
  const start = (): Promise<void> =>
    new Promise((resolve, reject) => {
      const s = createServer((req, res) => {
        const chunks: Buffer[] = [];
        req.on('data', (c: Buffer) => chunks.push(c));
        req.on('end', () => {
          const path = req.url ?? '';
          if (failing.has(path)) {
            res.writeHead(500).end();
            return;
          }
          got.push({ path, headers: req.headers, body: Buffer.concat(chunks).toString('utf8') });
          res.writeHead(204).end();
        });
      });
      s.once('error', reject);
      s.listen(port, '127.0.0.1', () => {
        port = (s.address() as AddressInfo).port;
        server = s;
        resolve();
      });
    });
  await start();
  return {
    url: (path) => `http://127.0.0.1:${port}${path}`,
    got,
    failing,
    start,
    stop: () =>
      new Promise((resolve) => {
        server?.closeAllConnections();
        server?.close(() => resolve());
        server = undefined;
      }),
  };
}

const as = (name: string, roles: string[] = ['analyst', 'lead']) => {
  const h: Record<string, string> = { 'x-ms-client-principal': encodePrincipal(name, roles) };
  return { get: (k: string) => h[k.toLowerCase()] ?? null };
};

const headerMap = (h: IncomingHttpHeaders): Record<string, string> =>
  Object.fromEntries(Object.entries(h).map(([k, v]) => [k, String(v)]));

for (const make of [serverDb, pgliteDb]) {
  const db: TestDb = make();
  describe(`webhooks of the case events: ${db.name}`, () => {
    let sql: SqlClient;
    let store: SqlCaseStore;
    let rx: Awaited<ReturnType<typeof receiver>>;
    let now = Date.now(); // close to the real time: Webhook.verify checks the timestamp within 5 min
    const clock = (): number => now;
    const audit: WebhookAuditEntry[] = [];
    let service: WebhookService;
    const events: { kind: keyof WebhookRelayEvents; e: unknown }[] = [];
    const relayOf = (windowMs = DEFAULT_BACKOFF.windowMs) =>
      new WebhookRelay({
        sql: () => sql,
        timers: unrefTimers,
        wallClock: clock,
        timeoutMs: 5_000,
        backoff: { ...DEFAULT_BACKOFF, windowMs },
        pollMs: 600_000, // passes run when the test asks
        on: {
          delivered: (e) => events.push({ kind: 'delivered', e }),
          failed: (e) => events.push({ kind: 'failed', e }),
          deadLettered: (e) => events.push({ kind: 'deadLettered', e }),
        },
      });
    /** Passes until nothing is due now (bounded). */
    const drain = async (relay: WebhookRelay): Promise<void> => {
      for (let i = 0; i < 20; i++) if ((await relay.pass()).nextInMs > 0) return;
      assert.fail('the relay kept finding due rows after 20 passes');
    };
    const openCase = async (tx: string): Promise<string> => {
      assert.equal(await store.open([newCase(tx, now, {}, { userId: `user-${tx}` })], now), 1);
      const c = (await store.list({}, 'newest', 1000)).cases.find((x) => x.transactionId === tx);
      assert.ok(c !== undefined);
      return c.id;
    };

    before(async () => {
      sql = await db.client();
      store = await SqlCaseStore.create(sql, undefined, SHARED_WITH_CASES);
      rx = await receiver();
      service = new WebhookService({
        sql: () => sql,
        identity: new Identity({ mode: 'development', devActor: { name: 'dev', roles: ['analyst'] } }),
        record: (e) => Promise.resolve(void audit.push(e)),
        wallClock: clock,
      });
    });
    beforeEach(() => {
      now = Date.now(); // the tests advance the clock; a signature must stay within verify's 5 min
    });
    after(async () => {
      await rx.stop();
      await store.dispose();
      await db.cleanup();
    });

    it('a held payment sends review.opened, its verdict review.closed, signed and without personal data', async () => {
      const created = await service.create(as('lead-1'), {
        url: rx.url('/a'),
        events: ['review.opened', 'review.closed'],
      });
      const secret = created.secret ?? assert.fail('a generated secret is in the answer');
      const relay = relayOf();
      const id = await openCase('tx-held-1');
      await drain(relay);
      now += 5_000;
      const closed = await store.close(id, 'alice', 'fraud', 'called the customer', now);
      assert.ok(closed.ok);
      await drain(relay);
      const got = rx.got.filter((r) => r.path === '/a');
      assert.deepEqual(
        got.map((r) => (JSON.parse(r.body) as { type: string }).type),
        ['review.opened', 'review.closed'],
      );
      const [opened, verdict] = got.map((r) => new Webhook(secret).verify(r.body, headerMap(r.headers))) as {
        type: string;
        timestamp: string;
        data: Record<string, unknown>;
      }[];
      assert.deepEqual(opened?.data, {
        caseId: id,
        transactionId: 'tx-held-1',
        merchantId: 'm-1',
        decision: 'review',
        decidedAt: new Date(now - 5_000).toISOString(),
        openedAt: new Date(now - 5_000).toISOString(),
      });
      assert.deepEqual(verdict?.data, {
        ...opened?.data,
        verdict: 'fraud',
        closedAt: new Date(now).toISOString(),
      });
      assert.equal(verdict?.timestamp, new Date(now).toISOString());
      const all = got.map((r) => r.body).join('\n');
      for (const personal of ['user-tx-held-1', 'called the customer', 'alice', '1500'])
        assert.ok(!all.includes(personal), `no ${personal} in a payload`);
      assert.notEqual(got[0]?.headers['webhook-id'], got[1]?.headers['webhook-id']);
      await service.remove(as('lead-1'), created.webhook.id);
      await relay.dispose();
    });

    it('with the receiver down for 30 s, every event arrives afterwards, once, opened before closed', async () => {
      const created = await service.create(as('lead-1'), {
        url: rx.url('/b'),
        events: ['review.opened', 'review.closed'],
      });
      const secret = created.secret ?? assert.fail('secret');
      const relay = relayOf();
      await rx.stop();
      const ids = [await openCase('tx-down-1'), await openCase('tx-down-2'), await openCase('tx-down-3')];
      assert.ok((await store.close(ids[0] ?? '', 'bob', 'legit', undefined, now)).ok); // closed while opened is pending
      const start = now;
      const first = await relay.pass();
      assert.deepEqual([first.delivered, first.failed], [0, 3], "the closed event waits behind its case's opened");
      for (const step of [10_000, 20_000]) {
        now += step;
        const p = await relay.pass();
        assert.equal(p.delivered, 0);
      }
      assert.equal(now - start, 30_000);
      await rx.start();
      now += 40_000; // the next retry of each (10 s, 20 s, then 40 s)
      await drain(relay);
      const got = rx.got.filter((r) => r.path === '/b');
      const idsSeen = got.map((r) => String(r.headers['webhook-id']));
      assert.equal(new Set(idsSeen).size, idsSeen.length, 'none twice by webhook-id');
      const seen = got.map((r) => {
        const p = new Webhook(secret).verify(r.body, headerMap(r.headers)) as {
          type: string;
          data: { transactionId: string };
        };
        return `${p.data.transactionId} ${p.type}`;
      });
      assert.deepEqual(
        [...seen].sort(),
        ['tx-down-1 review.closed', 'tx-down-1 review.opened', 'tx-down-2 review.opened', 'tx-down-3 review.opened'],
        'none lost',
      );
      assert.ok(seen.indexOf('tx-down-1 review.opened') < seen.indexOf('tx-down-1 review.closed'), 'opened first');
      // a later pass sends nothing again
      now += 3_600_000;
      await drain(relay);
      assert.equal(rx.got.filter((r) => r.path === '/b').length, 4);
      await service.remove(as('lead-1'), created.webhook.id);
      await relay.dispose();
    });

    it('past its window a delivery is dead-lettered with its later events, listed, and redelivered in order', async () => {
      const created = await service.create(as('lead-1'), {
        url: rx.url('/c'),
        events: ['review.opened', 'review.closed'],
      });
      const relay = relayOf(60_000); // a one-minute window for the test (24 h and more in the service)
      rx.failing.add('/c');
      const id = await openCase('tx-dead-1');
      assert.ok((await store.close(id, 'bob', 'fraud', undefined, now)).ok);
      const late = await openCase('tx-dead-2'); // its verdict comes after its review.opened died
      for (let i = 0; i < 10; i++) {
        await drain(relay);
        now += 30_000;
      }
      assert.ok((await store.close(late, 'bob', 'legit', undefined, now)).ok);
      await drain(relay);
      const dead = await service.deliveries(as('lead-1'), new URLSearchParams({ state: 'dead' }));
      const mine = dead.deliveries.filter((d) => d.webhookId === created.webhook.id);
      assert.deepEqual(
        mine.map((d) => [d.transactionId, d.eventType, d.lastError]),
        [
          ['tx-dead-2', 'review.closed', 'earlier_event_dead'],
          ['tx-dead-2', 'review.opened', 'http_500'],
          ['tx-dead-1', 'review.closed', 'earlier_event_dead'],
          ['tx-dead-1', 'review.opened', 'http_500'],
        ],
        'newest first; a later event of a dead one is dead-lettered with it, written before or after',
      );
      assert.ok(events.some((e) => e.kind === 'deadLettered'));
      rx.failing.delete('/c');
      for (const tx of ['tx-dead-1', 'tx-dead-2']) {
        const opened =
          mine.find((d) => d.eventType === 'review.opened' && d.transactionId === tx) ?? assert.fail('opened is dead');
        const r = await service.redeliver(as('lead-1'), opened.id);
        assert.equal(r.redelivered.length, 2, 'with its dead review.closed');
      }
      await drain(relay);
      const arrived = rx.got
        .filter((x) => x.path === '/c')
        .map((x) => JSON.parse(x.body) as { type: string; data: { transactionId: string } });
      for (const tx of ['tx-dead-1', 'tx-dead-2'])
        assert.deepEqual(
          arrived.filter((e) => e.data.transactionId === tx).map((e) => e.type),
          ['review.opened', 'review.closed'],
          tx,
        );
      assert.equal(
        (await service.deliveries(as('lead-1'), new URLSearchParams({ state: 'dead' }))).deliveries.length,
        0,
      );
      await assert.rejects(
        service.redeliver(as('lead-1'), mine[3]?.id ?? ''),
        (e: unknown) => e instanceof AppError && e.code === 'not_found',
      );
      await service.remove(as('lead-1'), created.webhook.id);
      await relay.dispose();
    });

    it('the API: leads only, secrets never listed, rotation signs with every active secret, the last one stays', async () => {
      await assert.rejects(
        service.create(as('ann', ['analyst']), { url: rx.url('/d'), events: ['review.opened'] }),
        (e: unknown) => e instanceof AppError && e.code === 'forbidden',
      );
      const given = `whsec_${Buffer.alloc(32, 7).toString('base64')}`;
      const created = await service.create(as('lead-1'), {
        url: rx.url('/d?token=t0k'),
        events: ['review.opened'],
        secret: given,
      });
      assert.equal(created.secret, undefined, 'a secret the lead gave is not echoed');
      const listed = JSON.stringify(await service.list(as('lead-1')));
      assert.ok(!listed.includes(given.slice(6)), 'no secret in the list');
      const rotated = await service.addSecret(as('lead-1'), created.webhook.id, undefined);
      const second = rotated.secret ?? assert.fail('a generated secret');
      assert.deepEqual(
        rotated.webhook.secrets.map((s) => s.n),
        [1, 2],
      );
      const relay = relayOf();
      await openCase('tx-rotate-1');
      await drain(relay);
      const r1 = rx.got.filter((x) => x.path.startsWith('/d')).at(-1) ?? assert.fail('delivered');
      assert.equal(String(r1.headers['webhook-signature']).split(' ').length, 2);
      for (const s of [given, second]) new Webhook(s).verify(r1.body, headerMap(r1.headers));
      await service.removeSecret(as('lead-1'), created.webhook.id, '1');
      await openCase('tx-rotate-2');
      await drain(relay);
      const r2 = rx.got.filter((x) => x.path.startsWith('/d')).at(-1) ?? assert.fail('delivered');
      new Webhook(second).verify(r2.body, headerMap(r2.headers));
      assert.throws(() => new Webhook(given).verify(r2.body, headerMap(r2.headers)), /No matching signature/);
      await assert.rejects(
        service.removeSecret(as('lead-1'), created.webhook.id, '2'),
        (e: unknown) => e instanceof AppError && e.code === 'conflict',
      );
      await service.remove(as('lead-1'), created.webhook.id);
      await assert.rejects(
        service.remove(as('lead-1'), created.webhook.id),
        (e: unknown) => e instanceof AppError && e.code === 'not_found',
      );
      assert.deepEqual(
        audit.filter((a) => a.name === created.webhook.id).map((a) => a.action),
        ['create', 'add_secret', 'remove_secret', 'delete'],
      );
      assert.ok(!JSON.stringify(audit).includes('t0k'), 'the url is audited without its query');
      await relay.dispose();
    });

    it('two relays claiming at once send each event once (FOR UPDATE SKIP LOCKED)', async () => {
      const created = await service.create(as('lead-1'), { url: rx.url('/f'), events: ['review.opened'] });
      const [r1, r2] = [relayOf(), relayOf()];
      for (let i = 0; i < 12; i++) await openCase(`tx-pair-${i}`);
      for (let i = 0; i < 5; i++) await Promise.all([r1.pass(), r2.pass()]);
      const ids = rx.got.filter((r) => r.path === '/f').map((r) => String(r.headers['webhook-id']));
      assert.equal(ids.length, 12, 'every event');
      assert.equal(new Set(ids).size, 12, 'none twice');
      await service.remove(as('lead-1'), created.webhook.id);
      await Promise.all([r1.dispose(), r2.dispose()]);
    });

    it('the platform topic gets the same events, ordered, with the webhook-id as message id; it is never listed', async () => {
      const sent: { id: string; type: string; body: unknown }[] = [];
      let down = true;
      const topic: TopicPublisher = {
        publish: (id, type, payload) => {
          if (down) return Promise.reject(new AppError('dependency_unavailable', 'Service Bus is down.'));
          sent.push({ id, type, body: JSON.parse(payload) });
          return Promise.resolve();
        },
        dispose: () => Promise.resolve(),
      };
      const endpoints = new WebhookEndpoints(sql);
      await endpoints.setTopic('case-events', ['review.opened', 'review.closed'], now);
      const relay = new WebhookRelay({ sql: () => sql, timers: unrefTimers, wallClock: clock, topic, pollMs: 600_000 });
      const id = await openCase('tx-topic-1');
      assert.ok((await store.close(id, 'bob', 'fraud', undefined, now)).ok);
      await drain(relay);
      assert.equal(sent.length, 0, 'nothing while the topic is down');
      down = false;
      now += 60_000;
      await drain(relay);
      assert.deepEqual(
        sent.map((m) => m.type),
        ['review.opened', 'review.closed'],
      );
      assert.match(sent[0]?.id ?? '', /^msg_\d+$/);
      assert.ok(!JSON.stringify(await service.list(as('lead-1'))).includes('servicebus:'), 'the topic is not listed');
      await endpoints.setTopic(undefined, ['review.opened', 'review.closed'], now); // not configured: no more rows
      await openCase('tx-topic-2');
      const pending = await sql.query(
        `SELECT count(*)::int AS n FROM webhook_deliveries WHERE transaction_id = 'tx-topic-2'`,
      );
      assert.equal(pending[0]?.['n'], 0);
      await relay.dispose();
    });

    it('a relay woken by commits delivers without being asked', async () => {
      const created = await service.create(as('lead-1'), { url: rx.url('/e'), events: ['review.opened'] });
      const relay = new WebhookRelay({ sql: () => sql, timers: unrefTimers, wallClock: clock, pollMs: 600_000 });
      relay.start();
      await openCase('tx-wake-1');
      relay.wake();
      await eventually(
        () => Promise.resolve(rx.got.some((r) => r.path === '/e')),
        (v) => v,
        'the woken relay to deliver review.opened',
        20_000,
      );
      await relay.dispose();
      await service.remove(as('lead-1'), created.webhook.id);
    });
  });
}
