/** The console's entry: who is acting, the router over `location.hash`, and the global shortcut `n` (take next). */
import { ApiError, call } from './api.js';
import { leaveCase, showCase } from './case-view.js';
import { h, say, showPage, typing } from './dom.js';
import { showFailure } from './failure.js';
import { showDraft } from './draft-view.js';
import { showDrafts, showNewDraft } from './draft-views.js';
import { showAudit } from './governance-views.js';
import { showDrift, showRules } from './insights-views.js';
import { showLists } from './lists-view.js';
import { showServing } from './serving-view.js';
import { fail, showQueue, takeNext } from './queue.js';
import type { Me } from './types.js';
import { showWebhooks } from './webhooks-view.js';

let me: Me | undefined;

/** The navigation entry a page belongs to. */
const NAV_OF: Readonly<Record<string, string>> = { case: 'queue', draft: 'drafts' };

function days(q: URLSearchParams): number {
  const n = Number(q.get('days') ?? 7);
  return Number.isInteger(n) && n >= 1 && n <= 30 ? n : 7;
}

async function route(): Promise<void> {
  leaveCase();
  const [path = '', qs = ''] = location.hash.replace(/^#/, '').split('?');
  const q = new URLSearchParams(qs);
  const section = path.split('/')[1] ?? 'queue';
  for (const a of document.querySelectorAll('nav a'))
    if (a.getAttribute('href') === `#/${NAV_OF[section] ?? section}`) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  if (me === undefined) return;
  if (section === 'case') return showCase(decodeURIComponent(path.split('/')[2] ?? ''), me);
  if (section === 'rules') return showRules(days(q));
  if (section === 'drift') return showDrift(days(q));
  if (section === 'serving') return showServing();
  if (section === 'drafts') return path.split('/')[2] === 'new' ? showNewDraft() : showDrafts(me);
  if (section === 'draft') return showDraft(decodeURIComponent(path.split('/')[2] ?? ''), me);
  if (section === 'audit') return showAudit(q);
  if (section === 'lists') {
    const name = path.split('/')[2];
    return showLists(name === undefined ? undefined : decodeURIComponent(name), q.get('cursor') ?? undefined, me);
  }
  if (section === 'webhooks') return showWebhooks(me);
  return showQueue({
    transactionId: q.get('transactionId') ?? undefined,
    userId: q.get('userId') ?? undefined,
    status: q.get('status') ?? undefined,
    queue: q.get('queue') ?? undefined,
    assignee: q.get('assignee') ?? undefined,
    rule: q.get('rule') ?? undefined,
    merchantId: q.get('merchantId') ?? undefined,
    minScore: q.get('minScore') ?? undefined,
    cursor: q.get('cursor') ?? undefined,
  });
}

/** Shows the page of the current address; a page that cannot load shows what happened instead (with a retry). */
function load(): void {
  void route().catch((e: unknown) => showFailure(e, load));
}

async function start(): Promise<void> {
  try {
    me = await call('me');
    const who = document.getElementById('who') as HTMLElement;
    who.replaceChildren(`Signed in as ${me.name} (${me.roles.join(', ') || 'no role'})`);
    if (me.development) who.append(' ', h('span', { class: 'dev', id: 'dev-identity' }, 'development identity'));
  } catch (e) {
    if (e instanceof ApiError && (e.status === 401 || e.status === 403)) {
      showPage('Sign-in needed', h('p', { id: 'failure-what' }, 'The console needs an authenticated analyst or lead.'));
      say(e.message, true);
    } else showFailure(e, () => location.reload());
    return;
  }
  // pages for leads only: analysts do not see their links (the API refuses them anyway)
  if (!me.roles.includes('lead'))
    for (const a of document.querySelectorAll('nav a[data-role="lead"]')) a.closest('li')?.setAttribute('hidden', '');
  window.addEventListener('hashchange', load);
  document.addEventListener('keydown', (e) => {
    if (e.key === 'n' && !typing(e) && !location.hash.startsWith('#/case/')) void takeNext().catch(fail);
  });
  if (location.hash === '') history.replaceState(null, '', '#/queue');
  say('');
  load();
}

void start();
