/**
 * The server of `npm run bench:swap`: this service on the local Functions host (all functions, default
 * settings from the environment), with the models folder feeding the blob trigger as `npm start` does.
 * `GET /__swap/state` answers the version serving and the current RSS; `/__bench/stats` the event-loop lag.
 */
import { promises as fs } from 'node:fs';
import type * as http from 'node:http';
import * as path from 'node:path';
import { sharedEngine } from '../lib/app';
import { LocalHost } from '../local/host';
import { BlobFeeder } from '../local/blob-feeder';
import { announce, statsRoute } from './servers/common';

async function main(): Promise<void> {
  const dir = path.join(__dirname, '..', 'functions');
  const modules = (await fs.readdir(dir)).filter((f) => f.endsWith('.js')).map((f) => path.join(dir, f));
  const route = (req: http.IncomingMessage, res: http.ServerResponse): boolean => {
    if (!(req.url ?? '').startsWith('/__swap/state')) return statsRoute(req, res);
    void sharedEngine().then((e) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          version: e.sessions.manifest?.version,
          rss: process.memoryUsage.rss(),
          fleet: e.models.readiness(),
        }),
      );
    });
    return true;
  };
  const host = await LocalHost.create({ port: 0, appModules: modules, log: () => undefined, extraRoutes: route });
  const feeder = await BlobFeeder.start({
    host,
    repository: (await sharedEngine()).models.repository,
    intervalMs: 100,
  });
  announce(host.port);
  process.on(
    'SIGTERM',
    () => void (feeder?.stop() ?? Promise.resolve()).then(() => host.dispose()).finally(() => process.exit(0)),
  );
}

void main();
