/**
 * The local host's HTTP front, on its own thread (as the Functions host is its own process in Azure): it
 * parses HTTP, routes, applies host.json's HTTP throttles (429 here, never on the app's event loop) and
 * sends each invocation to the app thread over the worker port, as the host sends invocations to the Node
 * worker over gRPC. Started by `./http-front` with {@link FrontSettings} as its `workerData`.
 * @module
 */
import { parentPort, workerData } from 'node:worker_threads';
import type { AppMessage, FrontMessage, FrontSettings, PlainResponse } from './front-protocol';
import { type DecodedHttpResponse } from './rpc';
import { FunctionsHttpServer, readBody, sendProblem, type RouteTarget } from './http-server';
import { HttpThrottle } from './http-throttle';
import { RouteTable } from './routes';

if (parentPort === null) throw new Error('http-front-worker runs as a worker thread');
const port = parentPort;
const settings = workerData as FrontSettings;
const post = (m: FrontMessage): void => port.postMessage(m);

let nextId = 0;
const waiting = new Map<
  number,
  { resolve(v: DecodedHttpResponse | PlainResponse | undefined): void; reject(e: Error): void }
>();
/** Sends a call to the app thread; when `abandoned` aborts first, its answer is forgotten (never awaited). */
const call = <T>(send: (id: number) => FrontMessage, abandoned?: AbortSignal): Promise<T> =>
  new Promise<T>((resolve, reject) => {
    const id = ++nextId;
    waiting.set(id, { resolve: resolve as (v: unknown) => void, reject });
    abandoned?.addEventListener('abort', () => waiting.delete(id), { once: true });
    post(send(id));
  });

const routes = new RouteTable<RouteTarget>();
for (const r of settings.routes) routes.add(r.route, [...r.methods], { name: r.name });
const prefix = settings.routePrefix.replace(/^\/+|\/+$/g, '').toLowerCase();

/** Whether a path is a function route (any method): those never go to the extra routes. */
function isFunctionPath(pathname: string): boolean {
  const segments = pathname.split('/').slice(1);
  if (segments.at(-1) === '') segments.pop();
  let parts: string[];
  try {
    parts = segments.map((s) => decodeURIComponent(s));
  } catch {
    return false;
  }
  const pre = prefix === '' ? [] : prefix.split('/');
  if (!pre.every((p, i) => parts[i]?.toLowerCase() === p)) return false;
  return routes.match('GET', parts.slice(pre.length)).kind !== 'not-found';
}

async function main(): Promise<void> {
  const server = await FunctionsHttpServer.listen({
    host: settings.host,
    port: settings.port,
    routePrefix: settings.routePrefix,
    routes,
    maxBodyBytes: settings.maxBodyBytes,
    throttle: new HttpThrottle(settings.throttles),
    functionTimeoutMs: settings.functionTimeoutMs,
    log: (level, message) => post({ t: 'log', level, message }),
    invokeHttp: (fn, http, abandoned) =>
      call<DecodedHttpResponse | undefined>((id) => ({ t: 'invoke', id, name: fn.name, http }), abandoned),
    ...(settings.extraRoutes
      ? {
          extraRoutes: async (req, res) => {
            const url = req.url ?? '/';
            if (isFunctionPath(url.split('?')[0] ?? '/')) return false;
            let body: Buffer;
            try {
              body = await readBody(req, settings.maxBodyBytes);
            } catch (err) {
              sendProblem(res, 413, (err as Error).message);
              return true;
            }
            const method = req.method ?? 'GET';
            const answer = await call<PlainResponse | undefined>((id) => ({
              t: 'extra',
              id,
              method,
              url,
              headers: req.headers,
              body,
            }));
            if (answer === undefined) return false;
            res.writeHead(answer.status, answer.headers);
            res.end(answer.body);
            return true;
          },
        }
      : {}),
  });
  port.on('message', (m: AppMessage) => {
    if (m.t === 'close') {
      void server.close(m.timeoutMs).then(() => post({ t: 'closed' }));
      return;
    }
    const w = waiting.get(m.id);
    if (w === undefined) return;
    waiting.delete(m.id);
    if (m.t === 'error') w.reject(new Error(m.message));
    else w.resolve(m.response);
  });
  post({ t: 'listening', port: server.port });
}

main().catch((err: unknown) => post({ t: 'failed', message: err instanceof Error ? err.message : String(err) }));
