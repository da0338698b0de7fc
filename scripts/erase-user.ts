/** `npm run learning:erase`: lib/commands/erase-command.ts with the service's own settings. */
import { configFromEnvironment } from '../lib/app';
import { eraseCommand } from '../lib/commands/erase-command';
import { run } from '../lib/commands/learning-cli';

run(() => eraseCommand(process.argv.slice(2), configFromEnvironment()).then(() => undefined));
