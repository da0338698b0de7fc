import * as path from 'node:path';
import { appRoot } from '../../../lib/config/app-root';
import { LocalHost } from '../../../local/host';
import { hostJsonHttp } from '../../../local/host-json';

/** The compiled function modules the scoring tests serve (explicit, so unrelated triggers stay out). */
export const SCORING_MODULES = ['hooks', 'health', 'score', 'score-batch'].map((m) =>
  path.join(__dirname, '..', '..', '..', 'functions', `${m}.js`),
);

/**
 * Serves the app's scoring functions over real HTTP through the local Functions host, with host.json's
 * HTTP settings as `npm start` has them. Settings come from `process.env` (read once by `sharedEngine()`, which this
 * creates): set them before calling this. One per process.
 */
export async function startServiceHost(): Promise<LocalHost> {
  const { routePrefix, maxConcurrentRequests, maxOutstandingRequests } = hostJsonHttp(appRoot());
  return LocalHost.create({
    port: 0,
    appModules: SCORING_MODULES,
    log: () => undefined,
    routePrefix,
    throttles: { maxConcurrentRequests, maxOutstandingRequests },
  });
}

/** POSTs JSON; fails (rejects) if no answer comes within `timeoutMs` (default 20 s). */
export async function postJson(
  url: string,
  body: unknown,
  headers: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<{ status: number; headers: Headers; body: Record<string, unknown> }> {
  const res = await fetch(url, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
    signal: AbortSignal.timeout(timeoutMs),
  });
  return { status: res.status, headers: res.headers, body: (await res.json()) as Record<string, unknown> };
}
