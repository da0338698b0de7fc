/**
 * `npm start`: serves the app's registered functions on http://127.0.0.1:7071/api, like `func start`,
 * on embedded defaults (bundled model, in-process stores). Reads `local.settings.json` Values when present,
 * as `func start` does; real environment variables win.
 *
 * `npm start -- --verbose` (or `LOCAL_HOST_VERBOSE=1`): also print `Executing …` / `Executed …` for every
 * invocation and the library's debug logs. Off by default: the host's own lines go through a buffered,
 * asynchronous writer and stay off the per-request path.
 */
import './local-settings'; // first: local.settings.json Values, read by the telemetry preload too
import '../lib/telemetry/preload'; // then telemetry, before the modules it instruments load
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import { configureSharedEngine, sharedEngine } from '../lib/app';
import { BusJournal } from './bus-journal';
import { InProcessBus } from './in-process-bus';
import { InProcessTopicPublisher } from '../lib/async/result-publisher';
import { LocalHost } from './host';
import { hostJsonFunctionTimeout, hostJsonHttp, hostJsonServiceBus } from './host-json';
import { AsyncLineWriter } from './line-writer';
import { BlobFeeder } from './blob-feeder';
import { ServiceBusEmulator } from './service-bus-emulator';
import { workerProcessCount } from './worker-processes';

const ROOT = path.resolve(__dirname, '../..');

/** The compiled function modules named by package.json `main` (a `dir/*.js` glob, as the Functions host reads it). */
async function appModules(): Promise<string[]> {
  const main = (JSON.parse(await fs.readFile(path.join(ROOT, 'package.json'), 'utf8')) as { main: string }).main;
  const dir = path.join(ROOT, path.dirname(main));
  const suffix = path.basename(main).replace(/^\*/, '');
  return (await fs.readdir(dir))
    .filter((f) => f.endsWith(suffix))
    .sort()
    .map((f) => path.join(dir, f));
}

/** Defaults of the `%SETTING%` binding expressions, as local.settings.sample.json sets them. */
const BINDING_DEFAULTS: Record<string, string> = {
  SCORING_QUEUE: 'payments',
  RESULTS_TOPIC: 'risk-completed',
  REJECTED_QUEUE: 'scoring-rejected',
  CASE_INTAKE_QUEUE: 'case-intake',
  MODELS_CONTAINER: 'models',
  RULESETS_CONTAINER: 'models',
  SIGNALS_CONTAINER: 'models',
};

/**
 * `npm start`'s own defaults: cases in the embedded PostgreSQL (PGlite, `.data/pglite`), and the development
 * identity (`DEV_ACTOR_NAME`, or an `x-ms-client-principal` header a test sends). Azure's defaults are `none` and
 * `disabled` (lib/config).
 */
const NPM_START_DEFAULTS: Record<string, string> = {
  ROLLOUT_STATE_DIR: '.data/rollout', // without Redis, a promote or rollback survives a restart
  CASE_STORE: 'pglite',
  IDENTITY_MODE: 'development',
};

/** Deliveries of an intake batch before it is dead-lettered, as infra-bicep sets the queue's (docs/cases.md). */
const INTAKE_MAX_DELIVERY_COUNT = 100;

const unset = (k: string): boolean => (process.env[k] ?? '').trim() === '';

/**
 * With several worker processes, each has its own memory, as in Azure: state the processes must share needs Redis
 * (lists, rollout pointers, async results) and a case store that several processes can open (PostgreSQL, not
 * PGlite). Says so when Redis is missing; leaves the case queue off unless PostgreSQL is configured, and refuses
 * PGlite named explicitly.
 * @throws Error for `CASE_STORE=pglite` with more than one process.
 */
function sharedStateWithWorkerProcesses(count: number, warn: (line: string) => void): void {
  if (count <= 1) return;
  if (unset('REDIS_URL') && unset('REDIS_HOST'))
    warn(
      `FUNCTIONS_WORKER_PROCESS_COUNT=${count} without Redis: each worker process keeps its own lists, rollout ` +
        'pointers and async results, so an admin change reaches one process only. Set REDIS_URL, as Azure needs Redis.',
    );
  if ((process.env['CASE_STORE'] ?? '').trim() === 'pglite')
    throw new Error(
      `CASE_STORE=pglite cannot serve FUNCTIONS_WORKER_PROCESS_COUNT=${count}: PGlite is one process's database. ` +
        'Use CASE_STORE=postgres (PG_HOST, PG_DATABASE, PG_USER) or CASE_STORE=none.',
    );
  if (unset('CASE_STORE')) {
    process.env['CASE_STORE'] = 'none';
    warn(`FUNCTIONS_WORKER_PROCESS_COUNT=${count}: the case queue is off (CASE_STORE=postgres turns it on).`);
  }
}

async function main(): Promise<void> {
  for (const [k, v] of Object.entries(BINDING_DEFAULTS)) process.env[k] ??= v;
  sharedStateWithWorkerProcesses(workerProcessCount(process.env['FUNCTIONS_WORKER_PROCESS_COUNT']), console.warn);
  // an empty value (the samples' "") counts as unset, as in lib/config
  for (const [k, v] of Object.entries(NPM_START_DEFAULTS)) if ((process.env[k] ?? '').trim() === '') process.env[k] = v;
  const port = Number(process.env['PORT'] ?? 7071);
  const verbose = process.argv.includes('--verbose') || /^(1|true|yes)$/i.test(process.env['LOCAL_HOST_VERBOSE'] ?? '');
  const out = new AsyncLineWriter();
  const log = (line: string): void => out.write(line);
  // The embedded bus feeds the trigger locally, so results go to its topic even if a namespace is configured.
  // Its case intake queue is journalled on disk (BUS_JOURNAL_DIR, default .data/bus): a stop loses no case.
  const intakeQueue = process.env['CASE_INTAKE_QUEUE'] ?? 'case-intake';
  const journalDir = process.env['BUS_JOURNAL_DIR'] ?? '.data/bus'; // `none`: all in memory
  const bus = new InProcessBus(
    journalDir === 'none'
      ? {}
      : { journal: new BusJournal({ dir: path.resolve(ROOT, journalDir), queues: [intakeQueue] }) },
  );
  configureSharedEngine({
    bus,
    publisher: new InProcessTopicPublisher(bus, process.env['RESULTS_TOPIC'] ?? 'risk-completed'),
  });
  const serviceBus = new ServiceBusEmulator({
    bus,
    ...hostJsonServiceBus(ROOT),
    maxDeliveryCountByQueue: { [intakeQueue]: INTAKE_MAX_DELIVERY_COUNT },
    log,
  });
  const { routePrefix, dynamicThrottlesEnabled, ...throttles } = hostJsonHttp(ROOT);
  const host = await LocalHost.create({
    port,
    appModules: await appModules(),
    log,
    verbose,
    invocationLog: verbose,
    extraRoutes: serviceBus.route,
    routePrefix,
    throttles,
    functionTimeoutMs: hostJsonFunctionTimeout(ROOT),
    bus, // forked worker processes send to it (review cases)
  });
  if (dynamicThrottlesEnabled)
    log('host.json extensions.http.dynamicThrottlesEnabled: not emulated (it reads the Azure sandbox counters)');
  serviceBus.start(host);
  // the models container (models/ folder, or Azurite with AzureWebJobsStorage=UseDevelopmentStorage=true) feeds
  // every blob trigger by its declared path: models, rulesets under rulesets/{name}/{version}.json and signals under
  // features/{name}/{version}.json
  const models = await BlobFeeder.start({ host, repository: (await sharedEngine()).models.repository, log });
  if (models !== undefined)
    log(
      `Uploads: ${models.description} (a model's manifest {version}.json first); admin: ${host.url}/api/models, ${host.url}/api/rulesets, ${host.url}/api/signals`,
    );
  log(
    `Embedded Service Bus: POST ${host.url}/local/queues/{queue}/messages; GET …/messages, …/deadletter, ${host.url}/local/topics/{topic}/messages`,
  );
  log(`Listening on ${host.url}/${host.routePrefix} (Ctrl+C to stop)${verbose ? ' [verbose]' : ''}`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    log(`${signal}: shutting down gracefully`);
    serviceBus
      .stop()
      .then(() => models?.stop())
      .then(() => host.dispose())
      .then(
        () => process.exit(0),
        (err: unknown) => {
          console.error('shutdown failed', err);
          process.exit(1);
        },
      );
  };
  process.on('SIGINT', () => stop('SIGINT'));
  process.on('SIGTERM', () => stop('SIGTERM'));
}

main().catch((err: unknown) => {
  console.error('local host failed to start:', err instanceof Error ? err.message : err);
  process.exit(1);
});
