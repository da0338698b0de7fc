/**
 * What a page shows when it cannot load: a heading that names what happened, what to do next, and a way on, in
 * place of "Loading…" or of the page before. Every view goes through the router, which hands its failure here.
 */
import { ApiError } from './api.js';
import { h, say, showPage } from './dom.js';

/** A failure, for people: a title, what happened, and what to do. */
export interface Explained {
  readonly title: string;
  readonly what: string;
  readonly todo: string;
}

/** Explains a failed page load: an {@link ApiError} by its status, a failed `fetch` (a `TypeError`) as no connection. */
export function explain(e: unknown): Explained {
  if (e instanceof ApiError) {
    const said = e.message;
    if (e.status === 401)
      return {
        title: 'Sign-in needed',
        what: `The service did not recognise you (${said}).`,
        todo: 'Sign in again, then reload the page.',
      };
    if (e.status === 403)
      return {
        title: 'Not allowed',
        what: `Your role cannot open this page (${said}).`,
        todo: 'Ask a lead for access, or go back to the queue.',
      };
    if (e.status === 404)
      return {
        title: 'Not found',
        what: `${said}`,
        todo: 'Check the address: it may name something that does not exist or was deleted. Go back to the queue.',
      };
    if (e.status >= 400 && e.status < 500)
      return {
        title: 'Request refused',
        what: `The service refused the request (${e.status}): ${said}`,
        todo: 'Correct the address or the filters, then try again.',
      };
    return {
      title: 'The service failed',
      what: `The service answered ${e.status}: ${said}`,
      todo: 'Try again in a minute. If it keeps failing, tell the team that runs the service.',
    };
  }
  if (e instanceof TypeError)
    return {
      title: 'No connection',
      what: `The console could not reach the service (${e.message}).`,
      todo: 'Check the network connection, then try again.',
    };
  return {
    title: 'Something went wrong',
    what: e instanceof Error ? e.message : String(e),
    todo: 'Reload the page. If it keeps happening, tell the team that runs the service.',
  };
}

/** Replaces the page with what went wrong and what to do; `retry` reloads the page that failed. */
export function showFailure(e: unknown, retry?: () => void): void {
  const x = explain(e);
  showPage(
    x.title,
    h('p', { id: 'failure-what' }, x.what),
    h('p', { id: 'failure-todo' }, x.todo),
    h(
      'div',
      { class: 'actions' },
      retry === undefined ? null : h('button', { type: 'button', id: 'retry', onclick: () => retry() }, 'Try again'),
      h('a', { href: '#/queue' }, 'Back to the queue'),
    ),
  );
  say(`${x.title}. ${x.what}`, true);
}
