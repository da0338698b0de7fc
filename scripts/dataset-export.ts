/** `npm run dataset:export`: lib/commands/dataset-export-command.ts with the service's own settings. */
import { configFromEnvironment } from '../lib/app';
import { datasetExport } from '../lib/commands/dataset-export-command';
import { run } from '../lib/commands/learning-cli';

run(() => datasetExport(process.argv.slice(2), configFromEnvironment()).then(() => undefined));
