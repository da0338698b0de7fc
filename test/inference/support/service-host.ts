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
