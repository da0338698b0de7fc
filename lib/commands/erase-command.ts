/**
 * `npm run learning:erase -- --user <userId>` (or `--hash h_…`): removes every logged decision of one user, and
 * their transactions' labels, from the store the service writes; the email, IP address and card fingerprint
 * found in those decisions are stripped from other users' decisions too (lib/learning/erase.ts). `--email`,
 * `--ip` and `--card <fingerprint>` (each repeatable, with or without `--user`) add a value of the person's to
 * strip. Raw values are hashed with the log's key (`DECISION_LOG_HASH_KEY`, or the Key Vault secret), after the
 * payment schema's normalisation (email domain lower-cased, IPv6 canonical), and never stored or printed. With `--user` and a case store
 * configured (`CASE_STORE`), the user's review cases and their history go too (cases hold the raw id, so `--hash`
 * cannot find them). PGlite serves one process at a time: stop `npm start` before erasing from its database. With
 * Redis configured, the user's recent decisions (the case page's recent payments, keyed by the same hash) go too;
 * without Redis they live in the service's process only and go when it stops.
 */
import { parseArgs } from 'node:util';
import type { Config } from '../config/config';
import { caseStore } from '../cases/create-cases';
import { canonicalIp, isEmail, normaliseEmail } from '../domain/payment-fields';
import { eraseUser, type Erased } from '../learning/erase';
import { recentKey } from '../learning/recent-decisions-redis';
import { azureCredential } from '../platform/credential';
import { baseRedisOptions, planRedisConnection } from '../platform/redis/connection';
import { unrefTimers } from '../platform/timers';
import { hashFromConfig, storeOf } from './learning-cli';

/**
 * What {@link eraseCommand} removed: decisions and labels, cases (`undefined`: no case store, or `--hash`), and whether
 * the user had recent decisions in Redis (`undefined`: no Redis configured, or no user given).
 */
export interface ErasedWithCases extends Erased {
  readonly cases: number | undefined;
  readonly recent: boolean | undefined;
}

/** Deletes the user's recent decisions from the Redis the settings name (`undefined` without Redis). */
async function eraseRecent(config: Config, userHash: string): Promise<boolean | undefined> {
  const plan = planRedisConnection(config.redis);
  if (plan.mode === 'none') return undefined;
  const { createRedisClient, redisConnection } = await import('../platform/redis/client');
  const connection = await redisConnection(plan, {
    credential: () => azureCredential(config.redis.managedIdentityClientId),
    timers: unrefTimers,
  });
  const client = createRedisClient({ ...baseRedisOptions(1000), ...connection.options });
  try {
    await client.connect();
    return (await client.del(recentKey(config.redis.keyPrefix, userHash))) > 0;
  } finally {
    connection.auth?.dispose();
    client.disconnect();
  }
}

/** Erases one user; returns what was removed (also printed). */
export async function eraseCommand(argv: readonly string[], config: Config): Promise<ErasedWithCases> {
  const { values } = parseArgs({
    args: [...argv],
    options: {
      user: { type: 'string' },
      hash: { type: 'string' },
      email: { type: 'string', multiple: true },
      ip: { type: 'string', multiple: true },
      card: { type: 'string', multiple: true },
    },
    strict: true,
  });
  const emails = values.email ?? [];
  const ips = values.ip ?? [];
  const cards = values.card ?? [];
  if (values.user !== undefined && values.hash !== undefined) throw new Error('pass --user <userId> or --hash <h_…>');
  if (values.user === undefined && values.hash === undefined && emails.length + ips.length + cards.length === 0)
    throw new Error('pass --user <userId> or --hash <h_…>, and/or --email, --ip, --card');
  if (emails.some((e) => !isEmail(e))) throw new Error('--email: not an email address');
  const canonicalIps = ips.map(canonicalIp);
  if (canonicalIps.some((ip) => ip === undefined)) throw new Error('--ip: not an IPv4 or IPv6 address');
  const store = storeOf(config);
  const raw = [...emails.map(normaliseEmail), ...(canonicalIps as string[]), ...cards];
  // the key is read only when a raw value is to be hashed (`--hash` alone needs none)
  const h = values.user === undefined && raw.length === 0 ? undefined : await hashFromConfig(config);
  const hash = values.hash ?? (values.user === undefined ? undefined : h?.of(values.user));
  const linked = h === undefined ? [] : raw.map((v) => h.of(v));
  const erased = await eraseUser(store, hash, linked);
  console.log(
    `erased ${erased.records} decision(s) in ${erased.partitions} partition(s) and ${erased.labels} label(s) of ${hash ?? 'no user'}; ` +
      `stripped the person's email, IP address or card from ${erased.rewritten} other decision(s)`,
  );
  let cases: number | undefined;
  const cs = values.user === undefined ? undefined : await caseStore(config);
  if (cs !== undefined) {
    try {
      cases = await cs.eraseUser(values.user as string);
    } finally {
      await cs.dispose();
    }
    console.log(`erased ${cases} review case(s) of ${hash ?? 'no user'}`);
  } else if (config.cases.store.kind !== 'none')
    console.log('review cases hold the raw user id: pass --user to erase them');
  const recent = hash === undefined ? undefined : await eraseRecent(config, hash);
  if (recent !== undefined)
    console.log(`erased the recent decisions of ${hash ?? 'no user'}: ${recent ? 'yes' : 'none kept'}`);
  return { ...erased, cases, recent };
}
