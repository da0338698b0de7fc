/**
 * The lists as people change them (lib/governance/list-changes.ts), over the in-process list store and an
 * in-memory audit trail: the declared lists with their counts; entries page by page; an add and a removal by a
 * lead, each with its reason in the audit entry; an analyst reads but cannot change; every bad field named; an
 * undeclared list is 404 before anything changes.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { Decisioning } from '../../lib/decisioning/decisioning';
import { ListLookup } from '../../lib/decisioning/list-lookup';
import { MemoryListStore } from '../../lib/decisioning/list-store';
import { loadRuleset } from '../../lib/decisioning/load-ruleset';
import { GOLDEN_THRESHOLDS } from '../../lib/decisioning/ruleset-rollout';
import { Audit } from '../../lib/governance/audit';
import type { AuditEntry, AuditLog } from '../../lib/governance/audit-log';
import { ListChanges, parseAddWithReason } from '../../lib/governance/list-changes';
import { Identity } from '../../lib/identity/identity';
import { encodePrincipal } from '../../lib/identity/principal';
import { silentLogger } from '../../lib/platform/logger';

const ROOT = path.resolve(__dirname, '../../..');
const SHIPPED = readFileSync(path.join(ROOT, 'rulesets/fraud-rules/1.0.0.json'), 'utf8');
const NOW = Date.parse('2026-12-06T10:00:00Z');

const as = (name: string, roles: string[]): { get(n: string): string | null } => {
  const p = encodePrincipal(name, roles);
  return { get: (n) => (n === 'x-ms-client-principal' ? p : null) };
};
const LEAD = as('lee', ['lead']);
const ANALYST = as('ana', ['analyst']);

function setup(): { lists: ListChanges; entries: AuditEntry[]; store: MemoryListStore } {
  const entries: AuditEntry[] = [];
  const log: AuditLog = {
    record: async (e) => void entries.push(e),
    recordIn: async (_tx, e) => void entries.push(e),
    list: async () => ({ events: [] }),
  };
  const identity = new Identity({ mode: 'easyauth', devActor: { name: 'dev', roles: [] } });
  const store = new MemoryListStore(() => NOW);
  const decisioning = new Decisioning(
    new ListLookup(store, { maxEntries: 10, ttlMs: 1000 }),
    loadRuleset(SHIPPED, GOLDEN_THRESHOLDS),
  );
  return { lists: new ListChanges(decisioning, new Audit({ log, identity, logger: silentLogger })), entries, store };
}

describe('the lists people change', () => {
  it('a lead adds and removes with a reason; the audit entries keep both reasons; counts and pages follow', async () => {
    const { lists, entries } = setup();
    assert.deepEqual(await lists.names(ANALYST), {
      ruleset: { name: 'fraud-rules', version: '1.0.0' },
      lists: [{ name: 'blocked_users', key: 'userId', entries: 0 }],
    });
    await lists.add(LEAD, 'blocked_users', { values: ['u-1', 'u-2'], ttlSeconds: 86_400, reason: 'chargebacks' });
    await lists.add(LEAD, 'blocked_users', { values: ['u-3'], reason: 'confirmed fraud' });
    assert.equal((await lists.names(LEAD)).lists[0]?.entries, 3);
    const page = await lists.page(ANALYST, 'blocked_users', undefined);
    assert.deepEqual(page.entries, [
      { value: 'u-1', expiresAt: NOW + 86_400_000 },
      { value: 'u-2', expiresAt: NOW + 86_400_000 },
      { value: 'u-3' },
    ]);
    await lists.remove(LEAD, 'blocked_users', { value: 'u-2', reason: 'paid back' });
    assert.equal((await lists.names(LEAD)).lists[0]?.entries, 2);
    assert.deepEqual(
      entries.map((e) => [e.actor, e.kind, e.name, e.action, e.oldValue, e.newValue]),
      [
        [
          'lee',
          'list',
          'blocked_users',
          'add',
          null,
          { values: ['u-1', 'u-2'], ttlSeconds: 86_400, reason: 'chargebacks' },
        ],
        ['lee', 'list', 'blocked_users', 'add', null, { values: ['u-3'], reason: 'confirmed fraud' }],
        ['lee', 'list', 'blocked_users', 'remove', { value: 'u-2' }, { reason: 'paid back' }],
      ],
    );
  });

  it('an analyst reads but is refused a change (403); nothing changes', async () => {
    const { lists, entries, store } = setup();
    await assert.rejects(lists.add(ANALYST, 'blocked_users', { values: ['u-1'], reason: 'x' }), { code: 'forbidden' });
    await store.add('blocked_users', ['u-9']);
    await assert.rejects(lists.remove(ANALYST, 'blocked_users', { value: 'u-9', reason: 'x' }), {
      code: 'forbidden',
    });
    assert.equal(await store.count('blocked_users'), 1);
    assert.deepEqual(entries, []);
  });

  it('names every bad field: a missing reason with a bad value; an unknown field; an undeclared list is 404', async () => {
    const { lists, entries } = setup();
    await assert.rejects(lists.add(LEAD, 'blocked_users', { values: ['ok', ''] }), (e: { errors: unknown }) => {
      assert.deepEqual(e.errors, [
        { path: 'reason', message: 'is required' },
        { path: 'values.1', message: 'must be 1 to 128 characters' },
      ]);
      return true;
    });
    await assert.rejects(lists.add(LEAD, 'blocked_users', { values: ['u-1'], reason: '' }), {
      code: 'validation_failed',
    });
    await assert.rejects(
      lists.remove(LEAD, 'blocked_users', { value: 'u-1', reason: 'r', extra: 1 }),
      (e: { code: string; errors: { path: string }[] }) =>
        e.code === 'validation_failed' && e.errors[0]?.path === 'extra',
    );
    await assert.rejects(lists.remove(LEAD, 'blocked_users', { value: 'absent', reason: 'r' }), { code: 'not_found' });
    await assert.rejects(lists.add(LEAD, 'nope', { values: ['u-1'], reason: 'r' }), { code: 'not_found' });
    assert.deepEqual(entries, []);
    assert.deepEqual(parseAddWithReason('userId', { values: ['a'], reason: 'why' }), {
      reason: 'why',
      add: { values: ['a'] },
    });
  });
});
