/**
 * `npm run learning:erase -- --user <userId>` (or `--hash h_…`): removes every logged decision of one user, and
 * their transactions' labels, from the store the service writes. The raw id is hashed with the log's key
 * (`DECISION_LOG_HASH_KEY`, or the Key Vault secret) and never stored or printed.
 */
import { parseArgs } from 'node:util';
import { eraseUser, type Erased } from '../lib/learning/erase';
import { hashFromConfig, run, storeFromEnv } from './learning-cli';

/** Erases one user; returns what was removed (also printed). */
export async function eraseCommand(argv: readonly string[]): Promise<Erased> {
  const { values } = parseArgs({
    args: [...argv],
    options: { user: { type: 'string' }, hash: { type: 'string' } },
    strict: true,
  });
  if ((values.user === undefined) === (values.hash === undefined))
    throw new Error('pass --user <userId> or --hash <h_…>');
  const { config, store } = storeFromEnv();
  const hash = values.hash ?? (await hashFromConfig(config)).of(values.user as string);
  const erased = await eraseUser(store, hash);
  console.log(
    `erased ${erased.records} decision(s) in ${erased.partitions} partition(s) and ${erased.labels} label(s) of ${hash}`,
  );
  return erased;
}

if (require.main === module) run(() => eraseCommand(process.argv.slice(2)).then(() => undefined));
