/**
 * Variant (d) with the case queue's durable intake, as `npm start` runs it: the service of ./service, plus the
 * embedded bus with its case intake queue journalled on disk (`BUS_JOURNAL_DIR`), delivered by the embedded Service
 * Bus to the `caseIntake` function, which writes the cases to the store `CASE_STORE` names. The `cases` arm of
 * `bench:cpu` (`cpu.marginal.cases`) runs on it.
 */
import type * as http from 'node:http';
import * as os from 'node:os';
import * as path from 'node:path';
import { configureSharedEngine, sharedEngine } from '../../lib/app';
import { BusJournal } from '../../local/bus-journal';
import { InProcessBus } from '../../local/in-process-bus';
import { appRoot } from '../../lib/config/app-root';
import { hostJsonHttp, hostJsonServiceBus } from '../../local/host-json';
import { LocalHost } from '../../local/host';
import { ServiceBusEmulator } from '../../local/service-bus-emulator';
import { announce, statsRoute } from './common';

const MODULES = ['hooks', 'health', 'score', 'score-batch', 'case-intake'].map((m) =>
  path.join(__dirname, '..', '..', 'functions', `${m}.js`),
);

async function main(): Promise<void> {
  const queue = (process.env['CASE_INTAKE_QUEUE'] ??= 'case-intake');
  process.env['REJECTED_QUEUE'] ??= 'scoring-rejected';
  const bus = new InProcessBus({
    journal: new BusJournal({
      dir: process.env['BUS_JOURNAL_DIR'] ?? path.join(os.tmpdir(), `bench-bus-${process.pid}`),
      queues: [queue],
    }),
  });
  configureSharedEngine({ bus });
  const admissionRoute = async (req: http.IncomingMessage, res: http.ServerResponse): Promise<boolean> => {
    if (!(req.url ?? '').startsWith('/__bench/admission')) return statsRoute(req, res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(JSON.stringify({ engine: (await sharedEngine()).admissionStats ?? null }));
    return true;
  };
  const { routePrefix, maxConcurrentRequests, maxOutstandingRequests } = hostJsonHttp(appRoot());
  const host = await LocalHost.create({
    port: 0,
    appModules: MODULES,
    log: () => undefined,
    extraRoutes: admissionRoute,
    routePrefix,
    throttles: { maxConcurrentRequests, maxOutstandingRequests },
  });
  const sb = new ServiceBusEmulator({
    bus,
    ...hostJsonServiceBus(appRoot()),
    maxDeliveryCountByQueue: { [queue]: 100 },
  });
  sb.start(host);
  announce(host.port);
  process.on(
    'SIGTERM',
    () =>
      void sb
        .stop()
        .then(() => host.dispose())
        .finally(() => process.exit(0)),
  );
}

void main();
