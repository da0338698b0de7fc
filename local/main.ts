/**
 * `npm start`: serves the app's registered functions on http://127.0.0.1:7071/api, like `func start`,
 * on embedded defaults (bundled model, in-process stores). Reads `local.settings.json` Values when present,
 * as `func start` does; real environment variables win.
 */
import { promises as fs, existsSync, readFileSync } from 'node:fs';
import * as path from 'node:path';
import { configureSharedEngine, inProcessBus, sharedEngine } from '../lib/app';
import { InProcessTopicPublisher } from '../lib/async/result-publisher';
import { LocalHost } from './host';
import { ModelFeeder } from './model-feeder';
import { ServiceBusEmulator } from './service-bus-emulator';

const ROOT = path.resolve(__dirname, '../..');

function loadLocalSettings(): void {
  const file = path.join(ROOT, 'local.settings.json');
  if (!existsSync(file)) return;
  const values = (JSON.parse(readFileSync(file, 'utf8')) as { Values?: Record<string, string> }).Values ?? {};
  for (const [k, v] of Object.entries(values)) if (process.env[k] === undefined) process.env[k] = String(v);
}

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
  MODELS_CONTAINER: 'models',
};

/** host.json `extensions.serviceBus.maxConcurrentCalls` and `maxMessageBatchSize`. */
function serviceBusSettings(): { maxConcurrentCalls: number; maxMessageBatchSize: number } {
  const hostJson = JSON.parse(readFileSync(path.join(ROOT, 'host.json'), 'utf8')) as {
    extensions?: { serviceBus?: { maxConcurrentCalls?: number; maxMessageBatchSize?: number } };
  };
  const sb = hostJson.extensions?.serviceBus;
  return { maxConcurrentCalls: sb?.maxConcurrentCalls ?? 16, maxMessageBatchSize: sb?.maxMessageBatchSize ?? 1000 };
}

async function main(): Promise<void> {
  loadLocalSettings();
  for (const [k, v] of Object.entries(BINDING_DEFAULTS)) process.env[k] ??= v;
  const port = Number(process.env['PORT'] ?? 7071);
  const log = (line: string): void => console.log(line);
  // The embedded bus feeds the trigger locally, so results go to its topic even if a namespace is configured.
  configureSharedEngine({
    publisher: new InProcessTopicPublisher(inProcessBus(), process.env['RESULTS_TOPIC'] ?? 'risk-completed'),
  });
  const serviceBus = new ServiceBusEmulator({ bus: inProcessBus(), ...serviceBusSettings(), log });
  const host = await LocalHost.create({ port, appModules: await appModules(), log, extraRoutes: serviceBus.route });
  serviceBus.start(host);
  // the models container (models/ folder, or Azurite with AzureWebJobsStorage=UseDevelopmentStorage=true) feeds the blob trigger
  const models = await ModelFeeder.start({ host, repository: (await sharedEngine()).models.repository, log });
  if (models !== undefined)
    console.log(
      `Model uploads: ${models.description}/{name}/{version}.onnx (manifest {version}.json first) -> blob trigger; admin: ${host.url}/api/models`,
    );
  console.log(
    `Embedded Service Bus: POST ${host.url}/local/queues/{queue}/messages; GET …/messages, …/deadletter, ${host.url}/local/topics/{topic}/messages`,
  );
  console.log(`Listening on ${host.url}/${host.routePrefix} (Ctrl+C to stop)`);
  let stopping = false;
  const stop = (signal: string): void => {
    if (stopping) return;
    stopping = true;
    console.log(`${signal}: shutting down gracefully`);
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
