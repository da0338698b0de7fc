/**
 * Variant `naive_functions`: the naive Functions app (naive-functions-app.ts) served by the same local host
 * as the service (the real `@azure/functions` library, host.json's HTTP settings). What the host layer costs is
 * `naive_functions` against the host-free `naive` server.
 */
import * as path from 'node:path';
import { appRoot } from '../../lib/config/app-root';
import { LocalHost } from '../../local/host';
import { hostJsonHttp } from '../../local/host-json';
import { announce, statsRoute } from './common';

async function main(): Promise<void> {
  const { routePrefix, maxConcurrentRequests, maxOutstandingRequests } = hostJsonHttp(appRoot());
  const host = await LocalHost.create({
    port: 0,
    appModules: [path.join(__dirname, 'naive-functions-app.js')],
    log: () => undefined,
    extraRoutes: statsRoute,
    routePrefix,
    throttles: { maxConcurrentRequests, maxOutstandingRequests },
  });
  announce(host.port);
  process.on('SIGTERM', () => void host.dispose().finally(() => process.exit(0)));
}

void main();
