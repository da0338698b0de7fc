/**
 * Webhooks (docs/webhooks.md), for leads: the endpoints with their events and secrets; register one (a generated
 * secret is shown once, with a copy button); rotate (add a secret), remove a secret, delete an endpoint (after a
 * confirm); and the dead-letter list with a redelivery per row.
 */
import { call } from './api.js';
import type { Delivery, Webhook } from './api-contract.js';
import { h, say, showPage, table, when } from './dom.js';
import { fail } from './queue.js';
import type { Me } from './types.js';

const EVENTS = ['review.opened', 'review.closed'] as const;

/** A secret the service just generated: shown once, above the list. */
interface Revealed {
  readonly what: string;
  readonly secret: string;
}

/** A button whose accessible name adds `target` (hidden text) to its visible `label`. */
function button(label: string, target: string, attrs: Record<string, string>, act: () => Promise<void>): HTMLElement {
  return h(
    'button',
    { type: 'button', ...attrs, onclick: () => void act().catch(fail) },
    label,
    h('span', { class: 'visually-hidden' }, ` ${target}`),
  );
}

function secretPanel(r: Revealed): HTMLElement {
  const copy = async (): Promise<void> => {
    try {
      await navigator.clipboard.writeText(r.secret);
      say('Secret copied.');
    } catch {
      // the browser refused the clipboard: select the secret for a manual copy
      const code = document.getElementById('new-secret');
      if (code !== null) getSelection()?.selectAllChildren(code);
      say('The browser refused to copy: the secret is selected, copy it with Ctrl+C.', true);
    }
  };
  return h(
    'section',
    { class: 'secret', 'aria-labelledby': 'secret-h' },
    h('h2', { id: 'secret-h' }, `New secret: ${r.what}`),
    h(
      'p',
      { id: 'secret-warning', class: 'warning' },
      'This secret is shown only once. Copy it now and give it to the receiver: the service never shows it again.',
    ),
    h('p', {}, h('code', { id: 'new-secret' }, r.secret)),
    h('button', { type: 'button', id: 'copy-secret', onclick: () => void copy().catch(fail) }, 'Copy secret'),
  );
}

function registerForm(me: Me): HTMLElement {
  const submit = async (form: HTMLFormElement): Promise<void> => {
    const d = new FormData(form);
    // the service names an event it does not send (the form offers only those)
    const events = d.getAll('events').filter((v) => typeof v === 'string') as (typeof EVENTS)[number][];
    const r = await call('webhooksCreate', { body: { url: String(d.get('url') ?? ''), events } });
    await showWebhooks(me, r.secret === undefined ? undefined : { what: r.webhook.url, secret: r.secret });
    say(`Endpoint ${r.webhook.url} registered.`);
  };
  return h(
    'form',
    {
      class: 'register',
      'aria-labelledby': 'register-h',
      onsubmit: (e: Event) => {
        e.preventDefault();
        void submit(e.target as HTMLFormElement).catch(fail);
      },
    },
    h('h2', { id: 'register-h' }, 'Register an endpoint'),
    h(
      'label',
      {},
      'Endpoint URL',
      h('input', { name: 'url', id: 'w-url', type: 'url', required: true, size: 60, 'aria-describedby': 'w-url-help' }),
    ),
    h(
      'p',
      { id: 'w-url-help', class: 'help' },
      'https:// (http:// only to this machine). The service generates the signing secret.',
    ),
    h(
      'fieldset',
      {},
      h('legend', {}, 'Events'),
      EVENTS.map((ev) =>
        h('label', {}, h('input', { type: 'checkbox', name: 'events', value: ev, checked: true }), ev),
      ),
    ),
    h('button', { type: 'submit', class: 'primary', id: 'register' }, 'Register'),
  );
}

function endpoints(list: readonly Webhook[], me: Me): HTMLElement {
  const reload = (r?: Revealed): Promise<void> => showWebhooks(me, r);
  const rotate = (w: Webhook) => async (): Promise<void> => {
    const r = await call('webhooksAddSecret', { params: { id: w.id }, body: {} });
    await reload(r.secret === undefined ? undefined : { what: `${w.url} (secret ${r.n})`, secret: r.secret });
    say(`Secret ${r.n} added to ${w.url}.`);
  };
  const remove = (w: Webhook, n: number) => async (): Promise<void> => {
    await call('webhooksRemoveSecret', { params: { id: w.id, n: String(n) } });
    await reload();
    say(`Secret ${n} removed from ${w.url}.`);
  };
  const del = (w: Webhook) => async (): Promise<void> => {
    if (!confirm(`Delete the endpoint ${w.url}? Its secrets and its undelivered events are deleted too.`)) return;
    await call('webhooksDelete', { params: { id: w.id } });
    await reload();
    say(`Endpoint ${w.url} deleted.`);
  };
  return h(
    'section',
    { 'aria-labelledby': 'endpoints-h' },
    h('h2', { id: 'endpoints-h' }, 'Endpoints'),
    list.length === 0
      ? h('p', { id: 'no-webhooks' }, 'No endpoint is registered: register one below.')
      : table(
          'Webhook endpoints',
          ['URL', 'Events', 'Secrets', 'Created', 'Actions'],
          list.map((w) => [
            h('span', { class: 'url' }, w.url),
            w.events.join(', '),
            h(
              'ul',
              { class: 'secrets', 'aria-label': `Secrets of ${w.url}` },
              w.secrets.map((s) =>
                h(
                  'li',
                  {},
                  `Secret ${s.n}, added ${when(s.createdAt)} `,
                  w.secrets.length > 1 ? button('Remove', `secret ${s.n} of ${w.url}`, {}, remove(w, s.n)) : null,
                ),
              ),
            ),
            `${when(w.createdAt)} by ${w.createdBy}`,
            h(
              'div',
              { class: 'row-actions' },
              button('Add secret', `to ${w.url}`, {}, rotate(w)),
              button('Delete', `endpoint ${w.url}`, { class: 'fraud' }, del(w)),
            ),
          ]),
        ),
  );
}

function deadLetters(list: readonly Delivery[], more: boolean, me: Me): HTMLElement {
  const redeliver = (d: Delivery) => async (): Promise<void> => {
    const r = await call('webhooksRedeliver', { params: { id: d.id } });
    const n = r.redelivered.length;
    await showWebhooks(me);
    say(`Delivery ${d.id} is due again (${n} ${n === 1 ? 'delivery' : 'deliveries'} redelivered).`);
  };
  return h(
    'section',
    { 'aria-labelledby': 'dead-h' },
    h('h2', { id: 'dead-h' }, 'Dead letters'),
    h(
      'p',
      {},
      'Deliveries that failed every attempt for their whole retry window, newest first. Redeliver brings one back with the later events of its case, due at once.',
    ),
    list.length === 0
      ? h('p', { id: 'no-dead' }, 'No dead delivery.')
      : table(
          'Dead deliveries, newest first',
          ['Delivery', 'Event', 'Case', 'Transaction', 'Attempts', 'Dead since', 'Last error', 'Action'],
          list.map((d) => [
            d.id,
            d.eventType,
            h('a', { href: `#/case/${encodeURIComponent(d.caseId)}` }, `Case ${d.caseId}`),
            d.transactionId,
            d.attempts,
            when(d.deadAt),
            [d.lastError ?? '—', d.lastStatus === undefined ? '' : ` (HTTP ${d.lastStatus})`].join(''),
            button('Redeliver', `delivery ${d.id}`, {}, redeliver(d)),
          ]),
          [4],
        ),
    more ? h('p', {}, 'Only the newest 100 are listed.') : null,
  );
}

/** The webhooks page; `revealed`, a secret the service just generated (shown this once). An action reloads it, then says what it did. */
export async function showWebhooks(me: Me, revealed?: Revealed): Promise<void> {
  const [list, dead] = await Promise.all([
    call('webhooksList'),
    call('webhooksDeliveries', { query: { state: 'dead', limit: '100' } }),
  ]);
  showPage(
    'Webhooks',
    h(
      'p',
      {},
      'Endpoints of the merchant that receive review.opened and review.closed, signed in the Standard Webhooks format with every active secret.',
    ),
    revealed === undefined ? null : secretPanel(revealed),
    endpoints(list.webhooks, me),
    registerForm(me),
    deadLetters(dead.deliveries, dead.before !== undefined, me),
  );
}
