/**
 * The audit trail under `npm start` (PGlite in a temporary folder, the development identity, the models folder as the
 * container): admin changes by two principals (a ruleset promote and rollback, a list add and remove) and a ruleset
 * upload are listed by `GET /api/audit` newest first with their actors and old and new values; filters and the cursor
 * page through them; an analyst is refused; a bad query is 400 naming every bad parameter.
 */
import assert from 'node:assert/strict';
import { promises as fs } from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { AuditEvent } from '../../lib/governance/audit-log';
import { encodePrincipal } from '../../lib/identity/principal';
import { stopChild } from '../support/child-process';
import { eventually } from '../support/eventually';
import { startLocalHost, type LocalHost } from '../support/local-host';
import { copyBundled } from '../model-rollout/support/models';

const SHIPPED = path.resolve(__dirname, '../../../rulesets/fraud-rules/1.0.0.json');

const as = (name: string, roles: readonly string[] = ['lead']): Record<string, string> => ({
  'x-ms-client-principal': encodePrincipal(name, roles),
});

interface Page {
  events: AuditEvent[];
  cursor?: string;
}

describe('GET /api/audit under npm start', () => {
  let folder: Awaited<ReturnType<typeof copyBundled>>;
  let dir: string;
  let host: LocalHost;
  let shipped: Record<string, unknown>;
  const send = async (
    method: string,
    route: string,
    who: Record<string, string>,
    body?: unknown,
  ): Promise<{ status: number; text: string }> => {
    const res = await fetch(`${host.url}${route}`, {
      method,
      headers: { 'content-type': 'application/json', ...who },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
    return { status: res.status, text: await res.text() };
  };
  const audit = async (query: string, who = as('reader')): Promise<Page> => {
    const r = await send('GET', `/audit?${query}`, who);
    assert.equal(r.status, 200, r.text);
    return JSON.parse(r.text) as Page;
  };

  before(async () => {
    folder = await copyBundled();
    dir = await fs.mkdtemp(path.join(os.tmpdir(), 'test-audit-http-'));
    shipped = JSON.parse(await fs.readFile(SHIPPED, 'utf8')) as Record<string, unknown>;
    await fs.mkdir(path.join(folder.dir, 'rulesets', 'fraud-rules'), { recursive: true });
    await fs.writeFile(
      path.join(folder.dir, 'rulesets', 'fraud-rules', '1.1.0.json'),
      JSON.stringify({ ...shipped, version: '1.1.0' }),
    );
    host = await startLocalHost({
      set: {
        MODEL_DIR: folder.dir,
        PGLITE_DIR: path.join(dir, 'pglite'),
        DECISION_LOG_DIR: path.join(dir, 'decisions'),
        LOG_LEVEL: 'error',
      },
      unset: ['CASE_STORE', 'IDENTITY_MODE'],
      ms: 120_000,
    });
  });
  after(async () => {
    await stopChild(host.child, 'npm start to exit after SIGTERM');
    await folder.remove();
    await fs.rm(dir, { recursive: true, force: true });
  });

  it('lists admin changes by two principals with their actors and old and new values', async () => {
    assert.equal((await send('POST', '/rulesets/fraud-rules/promote', as('alice'), { version: '1.1.0' })).status, 200);
    assert.equal((await send('POST', '/rulesets/fraud-rules/rollback', as('bob'))).status, 200);
    assert.equal((await send('POST', '/lists/blocked_users', as('alice'), { values: ['u-1', 'u-2'] })).status, 200);
    assert.equal((await send('POST', '/lists/blocked_users/remove', as('bob'), { value: 'u-1' })).status, 200);
    // a failed change is not listed
    assert.equal(
      (await send('POST', '/rulesets/fraud-rules/promote', as('bob'), { version: '9.9.9' })).status >= 400,
      true,
    );

    const { events } = await audit('limit=200');
    const bare = events.map((e) => ({
      actor: e.actor,
      kind: e.kind,
      name: e.name,
      action: e.action,
      oldValue: e.oldValue,
      newValue: e.newValue,
    }));
    assert.deepEqual(bare, [
      {
        actor: 'bob',
        kind: 'list',
        name: 'blocked_users',
        action: 'remove',
        oldValue: { value: 'u-1' },
        newValue: null,
      },
      {
        actor: 'alice',
        kind: 'list',
        name: 'blocked_users',
        action: 'add',
        oldValue: null,
        newValue: { values: ['u-1', 'u-2'] },
      },
      {
        actor: 'bob',
        kind: 'ruleset',
        name: 'fraud-rules',
        action: 'rollback',
        oldValue: { active: '1.1.0', previous: '1.0.0', candidate: null },
        newValue: { active: '1.0.0', previous: null, candidate: null },
      },
      {
        actor: 'alice',
        kind: 'ruleset',
        name: 'fraud-rules',
        action: 'promote',
        // nothing was published yet: the host served its bundled ruleset, the pointer had no active version
        oldValue: { active: null, previous: null, candidate: null },
        newValue: { active: '1.1.0', previous: '1.0.0', candidate: null },
      },
    ]);
    for (const e of events) assert.ok(Number.isFinite(Date.parse(e.at)) && /^[1-9][0-9]*$/.test(e.id));
  });

  it('lists an upload as blob-upload, and pages with filters and the cursor', async () => {
    await fs.writeFile(
      path.join(folder.dir, 'rulesets', 'fraud-rules', '1.2.0.json'),
      JSON.stringify({ ...shipped, version: '1.2.0' }),
    );
    const upload = await eventually(
      () => audit('actor=blob-upload&kind=ruleset&name=fraud-rules&limit=1'),
      (p) => p.events.some((e) => (e.newValue as { version?: string } | null)?.version === '1.2.0'),
      'the upload of ruleset 1.2.0 in the audit trail',
      60_000,
    );
    assert.equal(upload.events[0]?.action, 'upload');
    assert.equal((upload.events[0]?.newValue as { outcome: string }).outcome, 'published');

    const first = await audit('actor=alice&limit=1');
    assert.equal(first.events[0]?.action, 'add');
    assert.ok(first.cursor !== undefined);
    const second = await audit(`actor=alice&limit=1&cursor=${first.cursor}`);
    assert.equal(second.events[0]?.action, 'promote');
    assert.equal(second.cursor, undefined);
    const to = Date.parse(second.events[0]?.at ?? '');
    assert.deepEqual((await audit(`actor=alice&to=${to}`)).events, []);
    assert.equal((await audit(`actor=alice&from=${to}&kind=ruleset`)).events.length, 1);
  });

  it('refuses an analyst, and answers 400 naming every bad parameter', async () => {
    assert.equal((await send('GET', '/audit', as('ann', ['analyst']))).status, 403);
    const bad = await send('GET', '/audit?kind=rocket&limit=500&from=soon&cursor=zz', as('reader'));
    assert.equal(bad.status, 400);
    const problem = JSON.parse(bad.text) as { code?: string; errors: { path: string }[] };
    assert.deepEqual(problem.errors.map((e) => e.path).sort(), ['cursor', 'from', 'kind', 'limit']);
  });
});
