/**
 * `npm run cases:reconcile -- --from 2026-12-01 [--to 2026-12-02] [--show 50]`: the review decisions of the decision
 * log made in the window (from the store the service writes, `DECISION_LOG_*`) against the cases in the store
 * `CASE_STORE` names. Prints how many reviews, how many have a case, and the keyed hashes (the log's key,
 * `DECISION_LOG_HASH_KEY` or Key Vault) of the first `--show` transactions without one; exits 2 when any is missing.
 * PGlite serves one process at a time: stop `npm start` first.
 */
import { parseArgs } from 'node:util';
import { configFromEnvironment } from '../lib/app';
import { caseStore } from '../lib/cases/create-cases';
import { reconcileCases, type Reconciliation } from '../lib/cases/case-reconcile';
import { SqlCaseStore } from '../lib/cases/sql-case-store';
import { dateArg, hashFromConfig, run, storeOf } from '../lib/commands/learning-cli';

/** Reconciles and prints; returns what was found. */
export async function reconcileCommand(argv: readonly string[]): Promise<Reconciliation> {
  const { values } = parseArgs({
    args: [...argv],
    options: { from: { type: 'string' }, to: { type: 'string' }, show: { type: 'string', default: '50' } },
    strict: true,
  });
  const from = dateArg('from', values.from);
  const to = values.to === undefined ? Date.now() : dateArg('to', values.to);
  const show = Number(values.show);
  if (!Number.isInteger(show) || show < 0) throw new Error('--show must be a whole number');
  const config = configFromEnvironment();
  const store = storeOf(config);
  const cases = await caseStore(config);
  if (!(cases instanceof SqlCaseStore)) throw new Error('no case store is configured (CASE_STORE=none)');
  try {
    const r = await reconcileCases(store, cases.sql, await hashFromConfig(config), from, to);
    console.log(
      `${r.reviews} review decision(s) from ${new Date(from).toISOString()} to ${new Date(to).toISOString()}: ` +
        `${r.withCase} with a case, ${r.missing.length} without`,
    );
    for (const h of r.missing.slice(0, show)) console.log(`missing ${h}`);
    if (r.missing.length > show) console.log(`… and ${r.missing.length - show} more (--show)`);
    return r;
  } finally {
    await cases.dispose();
    await store.dispose();
  }
}

if (require.main === module)
  run(() =>
    reconcileCommand(process.argv.slice(2)).then((r) => {
      if (r.missing.length > 0) process.exitCode = 2;
    }),
  );
