/**
 * The serving page: the model, ruleset and signals versions this instance serves with their candidates and who made the
 * active version active when (every kind's status view), who promoted what and when (the audit trail's rollout
 * entries, for leads), and the status with no server file path in it.
 */
import { ApiError, call } from './api.js';
import type { AuditEvent } from './api-contract.js';
import { h, showPage, table, when } from './dom.js';

/** A JSON value as an object (empty when it is none): the status views are open objects (`Serving`). */
const obj = (v: unknown): Record<string, unknown> =>
  v !== null && typeof v === 'object' ? (v as Record<string, unknown>) : {};
const arr = (v: unknown): readonly unknown[] => (Array.isArray(v) ? (v as unknown[]) : []);
const str = (v: unknown): string | undefined => (typeof v === 'string' ? v : undefined);

/** The audit actions that change what serves. */
const ROLLOUT_ACTIONS = ['promote', 'rollback', 'traffic'];
/** The kinds whose rollouts the page lists. */
const KINDS = ['model', 'ruleset', 'signals'] as const;

/**
 * What serves, from a status view (every kind's: `serving`, `active` with who made it active and when, `candidate`
 * with its shares): the version served here, the candidate, and who made the active version active when.
 */
export function servingSummary(status: unknown): { name: string; serving: string; candidate: string; since: string } {
  const o = obj(status);
  const active = obj(o['active']);
  const serving = str(o['serving']) ?? str(active['version']) ?? '—';
  const c = obj(o['candidate']);
  const version = str(c['version']);
  const candidate =
    version === undefined
      ? 'none'
      : `${version} (canary ${String(c['canaryPercent'] ?? 0)} %, shadow ${String(c['shadowPercent'] ?? 0)} %)`;
  const by = str(active['by']);
  const at = str(active['at']);
  const since =
    str(active['version']) === undefined
      ? 'nothing published: the shipped version serves'
      : `${String(active['version'])}${by === undefined ? '' : ` by ${by}`}${at === undefined ? '' : `, ${when(at)}`}`;
  return { name: str(o['name']) ?? '—', serving, candidate, since };
}

const PATH_KEY = /(path|dir|directory|file|folder)$/i;
const PATH_VALUE = /^(\/|~\/|\.\.?\/|file:|[A-Za-z]:[\\/])|\\/;

/** `v` with every server file path replaced (keys named like a path, values that look like one). */
export function withoutPaths(v: unknown): unknown {
  if (typeof v === 'string') return PATH_VALUE.test(v) ? '(server path hidden)' : v;
  if (Array.isArray(v)) return v.map(withoutPaths);
  if (v === null || typeof v !== 'object') return v;
  const out: Record<string, unknown> = {};
  for (const [k, x] of Object.entries(v)) out[k] = PATH_KEY.test(k) ? '(server path hidden)' : withoutPaths(x);
  return out;
}

function versions(label: string, list: readonly unknown[]): HTMLElement {
  return h(
    'section',
    { 'aria-labelledby': `${label}-h` },
    h('h2', { id: `${label}-h` }, label),
    list.length === 0
      ? h('p', {}, 'None configured.')
      : [
          table(
            label,
            ['Name', 'Serving here', 'Candidate', 'Made active'],
            list.map((s) => {
              const v = servingSummary(s);
              return [v.name, v.serving, v.candidate, v.since];
            }),
          ),
          h(
            'details',
            {},
            h('summary', {}, `${label}: the full status`),
            list.map((s) => h('pre', {}, JSON.stringify(withoutPaths(s), null, 2))),
          ),
        ],
  );
}

/** A rollout pointer in words: `active 1.1.0, candidate 1.2.0 (canary 10 %, shadow 0 %)`. */
export function pointerText(p: unknown): string {
  if (p === null || p === undefined) return '—';
  const o = obj(p);
  const c = o['candidate'] === null || o['candidate'] === undefined ? undefined : obj(o['candidate']);
  const active = str(o['active']) ?? 'bundled';
  return c === undefined
    ? `active ${active}`
    : `active ${active}, candidate ${String(c['version'] ?? '?')} (canary ${String(c['canaryPercent'] ?? 0)} %, shadow ${String(c['shadowPercent'] ?? 0)} %)`;
}

/** The newest rollout changes (promote, rollback, traffic) of models, rulesets and signals, newest first. */
async function promotions(): Promise<HTMLElement> {
  const section = (...content: (HTMLElement | null)[]): HTMLElement =>
    h('section', { 'aria-labelledby': 'promotions-h' }, h('h2', { id: 'promotions-h' }, 'Who promoted what'), content);
  let events: AuditEvent[];
  try {
    const pages = await Promise.all(KINDS.map((kind) => call('auditList', { query: { kind, limit: '100' } })));
    events = pages
      .flatMap((p) => p.events)
      .filter((e) => ROLLOUT_ACTIONS.includes(e.action))
      .sort((a, b) => b.at.localeCompare(a.at))
      .slice(0, 50);
  } catch (e) {
    if (e instanceof ApiError && e.status === 403)
      return section(
        h('p', { id: 'promotions-none' }, 'Only leads read the audit trail, so who promoted what is shown to leads.'),
      );
    if (e instanceof ApiError && e.status === 404)
      return section(
        h('p', { id: 'promotions-none' }, 'There is no audit trail: it needs a case database (CASE_STORE=none).'),
      );
    throw e;
  }
  return section(
    events.length === 0
      ? h('p', { id: 'promotions-none' }, 'No promotion, rollback or traffic change is recorded yet.')
      : table(
          'Rollout changes, newest first',
          ['When', 'Who', 'Kind', 'Name', 'Action', 'Before', 'After'],
          events.map((e) => [
            when(e.at),
            e.actor,
            e.kind,
            e.name,
            e.action,
            pointerText(e.oldValue),
            pointerText(e.newValue),
          ]),
        ),
    h('p', {}, h('a', { href: '#/audit' }, 'The whole audit trail')),
  );
}

/** Model, ruleset and signals versions, canaries and shadows, and who changed them when. */
export async function showServing(): Promise<void> {
  const [s, who] = await Promise.all([call('insightsServing'), promotions()]);
  showPage(
    'Serving',
    versions('Models', arr(s['models'])),
    versions('Rulesets', arr(s['rulesets'])),
    versions('Signals', arr(s['signals'])),
    who,
  );
}
