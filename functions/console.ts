import '../lib/telemetry/preload'; // first: starts telemetry before the modules it instruments load
import { app, type HttpRequest, type HttpResponseInit } from '@azure/functions';
import { sharedConsoleFiles } from '../lib/app';

/**
 * The analysts' console (docs/console.md): its built page and modules, served from memory. Anonymous: the files hold
 * no data; everything the page shows comes from the case and insights routes, which check who is acting.
 */
async function serve(request: HttpRequest): Promise<HttpResponseInit> {
  const a = (await sharedConsoleFiles()).get(request.params['file'], request.headers.get('if-none-match'));
  return a.body === undefined
    ? { status: a.status, headers: a.headers }
    : { status: a.status, headers: a.headers, body: a.body };
}

/** GET /api/console: the page. */
app.http('console', { route: 'console', methods: ['GET'], authLevel: 'anonymous', handler: serve });

/** GET /api/console/{file}: its modules and style sheet. */
app.http('consoleFiles', { route: 'console/{file}', methods: ['GET'], authLevel: 'anonymous', handler: serve });
