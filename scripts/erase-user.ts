/**
 * `npm run learning:erase -- --user <userId>` (or `--hash h_…`): removes every logged decision of one user, and
 * their transactions' labels, from the store the service writes. The raw id is hashed with the log's key
 * (`DECISION_LOG_HASH_KEY`, or the Key Vault secret) and never stored or printed. With `--user` and a case store
 * configured (`CASE_STORE`), the user's review cases and their history go too (cases hold the raw id, so `--hash`
 * cannot find them). PGlite serves one process at a time: stop `npm start` before erasing from its database.
 */
import { parseArgs } from 'node:util';
import { caseStore } from '../lib/cases/create-cases';
import { eraseUser, type Erased } from '../lib/learning/erase';
import { hashFromConfig, run, storeFromEnv } from './learning-cli';

/** What {@link eraseCommand} removed: decisions and labels, and cases (`undefined`: no case store, or `--hash`). */
export interface ErasedWithCases extends Erased {
  readonly cases: number | undefined;
}

/** Erases one user; returns what was removed (also printed). */
export async function eraseCommand(argv: readonly string[]): Promise<ErasedWithCases> {
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
  let cases: number | undefined;
  const cs = values.user === undefined ? undefined : await caseStore(config);
  if (cs !== undefined) {
    try {
      cases = await cs.eraseUser(values.user as string);
    } finally {
      await cs.dispose();
    }
    console.log(`erased ${cases} review case(s) of ${hash}`);
  } else if (config.cases.store.kind !== 'none')
    console.log('review cases hold the raw user id: pass --user to erase them');
  return { ...erased, cases };
}

if (require.main === module) run(() => eraseCommand(process.argv.slice(2)).then(() => undefined));
