/** `npm run backtest`: lib/commands/backtest-command.ts with the service's own settings. */
import { configFromEnvironment } from '../lib/app';
import { backtestCommand } from '../lib/commands/backtest-command';
import { run } from '../lib/commands/learning-cli';

run(() => backtestCommand(process.argv.slice(2), configFromEnvironment()).then(() => undefined));
