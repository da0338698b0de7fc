/** `npm run model:train`: lib/commands/train-command.ts (arguments there). */
import { trainCommand } from '../lib/commands/train-command';
import { run } from '../lib/commands/learning-cli';

run(() => trainCommand(process.argv.slice(2)));
