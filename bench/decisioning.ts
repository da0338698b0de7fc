/**
 * `npm run bench:decisioning` (also the last step of `npm run bench`): the cost of the decision beside the score.
 * - `decisioning.rules_eval_p99_us`: one evaluation of 50 compiled rules (this process; target ≤ 50 µs);
 * - `decisioning.p99_ratio`: `/api/score` p99 with the example ruleset vs without rules (`RULESET_NAME=none`),
 *   both at 40 % of the rule-free service's maximum, open loop, the median of the per-round ratios over
 *   alternating rounds (`paired-p99.ts`; target ≤ 1.1);
 * - `decisioning.list_propagation_ms`: from a list add on one instance to the change applied on another
 *   (two connections on one Redis).
 * Writes bench/results/decisioning.json.
 */
import { promises as fs } from 'node:fs';
import * as path from 'node:path';
import Redis from 'ioredis';
import { appRoot } from '../lib/config/app-root';
import { compileRuleset } from '../lib/decisioning/compile-ruleset';
import { evaluateRuleset } from '../lib/decisioning/evaluate-ruleset';
import { ListLookup } from '../lib/decisioning/list-lookup';
import { RedisListStore } from '../lib/decisioning/redis-list-store';
import { startServer, type ServerChild } from './children';
import { loadRun, type RunFigures } from './load';
import { machine } from './machine';
import { pairedP99 } from './paired-p99';
import { paymentBody } from '../test/support/load/payment-body';
import { percentile } from '../test/support/load/percentile';

const QUICK = process.argv.includes('--quick');
const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';
const PLAN = QUICK ? { durationSec: 3, rounds: 2, evals: 20_000 } : { durationSec: 10, rounds: 5, evals: 100_000 };

function log(msg: string): void {
  process.stderr.write(`[bench:decisioning ${new Date().toISOString().slice(11, 19)}] ${msg}\n`);
}

/** 50 rules in the shapes the example uses: comparisons, conjunctions, list lookups, profile fields. */
function fiftyRules(): unknown {
  const shapes = [
    (i: number) => `event.amount >= ${1000 + i}.0 && features.new_device == 1.0`,
    (i: number) => `velocity.count1h >= ${10 + i}.0`,
    (i: number) => `in_list("blocked_users", event.userId) && event.amount > ${i}.0`,
    (i: number) => `event.merchantCategory == "7995" && event.amount >= ${500 + i}.0`,
    (i: number) => `has(event.ipCountry) && event.ipCountry != event.country && score > 0.${i % 10}`,
  ];
  const actions = ['review', 'review', 'block', 'escalate', 'review'];
  return {
    name: 'bench',
    version: '1',
    lists: [{ name: 'blocked_users', key: 'userId' }],
    rules: Array.from({ length: 50 }, (_, i) => ({ id: `r${i}`, when: shapes[i % 5]?.(i), action: actions[i % 5] })),
    profiles: [
      { id: 'gambling', thresholds: { review: 0.1, decline: 0.5 }, offset: 0.05, merchantCategories: ['7995'] },
    ],
  };
}

function rulesEval(): { p50_us: number; p99_us: number; evals: number } {
  const rs = compileRuleset(fiftyRules());
  const event = JSON.parse(paymentBody()) as Record<string, unknown>;
  const input = {
    event,
    features: { new_device: 0, amount_log: 4.8 },
    velocity: { count1m: 0, count1h: 1, count24h: 3, sum24h: 400, distinctCountries24h: 1 },
    score: 0.03,
    lists: new Map([['blocked_users', false]]),
    fallbackThresholds: { review: 0.2054, decline: 0.7493 },
  };
  for (let i = 0; i < 20_000; i++) evaluateRuleset(rs, input); // warm-up
  const us: number[] = [];
  for (let i = 0; i < PLAN.evals; i++) {
    const t0 = process.hrtime.bigint();
    evaluateRuleset(rs, input);
    us.push(Number(process.hrtime.bigint() - t0) / 1000);
  }
  us.sort((a, b) => a - b);
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return { p50_us: r2(percentile(us, 50)), p99_us: r2(percentile(us, 99)), evals: PLAN.evals };
}

async function propagation(): Promise<{ p50_ms: number; p99_ms: number; max_ms: number; samples: number }> {
  const prefix = `bench:dec:${process.pid}:`;
  const ra = new Redis(REDIS_URL);
  const rb = new Redis(REDIS_URL);
  const a = new RedisListStore(ra, prefix);
  let onApplied: (() => void) | undefined;
  const b = new ListLookup(new RedisListStore(rb, prefix), {
    maxEntries: 1000,
    ttlMs: 60_000,
    on: { applied: () => onApplied?.() },
  });
  if (!(await b.start())) throw new Error('the second instance could not subscribe');
  const ms: number[] = [];
  for (let i = 0; i < 200; i++) {
    const applied = new Promise<void>((resolve) => (onApplied = resolve));
    const t0 = performance.now();
    await a.add('blocked_users', [`u-${i}`]);
    await applied;
    ms.push(performance.now() - t0);
  }
  await a.dispose();
  await b.store.dispose();
  const keys = await ra.keys(`${prefix}*`);
  if (keys.length > 0) await ra.del(...keys);
  ra.disconnect();
  rb.disconnect();
  ms.sort((x, y) => x - y);
  const r2 = (x: number): number => Math.round(x * 100) / 100;
  return {
    p50_ms: r2(percentile(ms, 50)),
    p99_ms: r2(percentile(ms, 99)),
    max_ms: r2(ms.at(-1) ?? NaN),
    samples: ms.length,
  };
}

async function p99Ratio(): Promise<Record<string, unknown>> {
  const root = appRoot();
  const env = {
    MODEL_DIR: path.join(root, 'models'),
    MODEL_NAME: 'fraud',
    LOG_LEVEL: 'error',
    REDIS_URL,
    REDIS_KEY_PREFIX: 'bench:dec:svc:',
  };
  const servers: Record<string, ServerChild> = {};
  try {
    servers['rules'] = await startServer('servers/service', { ...env, RULESET_NAME: 'fraud-rules' });
    servers['none'] = await startServer('servers/service', { ...env, RULESET_NAME: 'none' });
    const run = (name: string, durationSec: number, rate?: number): Promise<RunFigures> =>
      loadRun({
        url: (servers[name] as ServerChild).url,
        path: '/api/score',
        body: paymentBody,
        connections: 32,
        durationSec,
        ...(rate === undefined ? {} : { rate }),
      });
    for (const n of ['none', 'rules']) await run(n, 2); // warm-up
    const max = await run('none', PLAN.durationSec);
    const offered = Math.max(1, Math.round(max.rps * 0.4));
    log(`max without rules ${max.rps} req/s; both at 40 % = ${offered} req/s`);
    const paired = await pairedP99(
      PLAN.rounds,
      (arm) => run(arm === 'a' ? 'none' : 'rules', PLAN.durationSec, offered),
      (arm, r, f) =>
        log(`round ${r}: ${arm === 'a' ? 'none' : 'rules'} p99 ${f.p99_ms} ms (${f.rps} req/s, non-2xx ${f.non2xx})`),
    );
    const none = paired.a;
    const rules = paired.b;
    return {
      max_rps_without_rules: max.rps,
      offered_rps: offered,
      without_rules: { p50_ms: none.p50_ms, p99_ms: none.p99_ms, rps: none.rps, non2xx: none.non2xx },
      with_rules: { p50_ms: rules.p50_ms, p99_ms: rules.p99_ms, rps: rules.rps, non2xx: rules.non2xx },
      p99_ratio: paired.p99_ratio,
      p99_ratio_rounds: paired.p99_ratio_rounds,
    };
  } finally {
    for (const s of Object.values(servers)) await s.stop();
  }
}

async function main(): Promise<void> {
  log('rules: 50 compiled rules, one evaluation at a time');
  const rules = rulesEval();
  log(`rules_eval p50 ${rules.p50_us} µs, p99 ${rules.p99_us} µs`);
  log('list propagation between two instances on one Redis');
  const prop = await propagation();
  log(`list propagation p50 ${prop.p50_ms} ms, p99 ${prop.p99_ms} ms`);
  log('/api/score with the example ruleset vs without rules, at 40 % of max');
  const http = await p99Ratio();
  const out = {
    machine: machine(),
    quick: QUICK,
    decisioning: {
      rules_eval_p99_us: rules.p99_us,
      rules_eval_p50_us: rules.p50_us,
      rules_eval_evals: rules.evals,
      p99_ratio: http['p99_ratio'],
      p99_ratio_rounds: http['p99_ratio_rounds'],
      score_at_40pct: http,
      list_propagation_ms: prop,
    },
    targets: { rules_eval_p99_us: 50, p99_ratio: 1.1 },
  };
  const dir = path.join(appRoot(), 'bench', 'results');
  await fs.mkdir(dir, { recursive: true });
  await fs.writeFile(path.join(dir, 'decisioning.json'), `${JSON.stringify(out, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(out.decisioning, null, 2)}\n`);
}

main().catch((err: unknown) => {
  process.stderr.write(`${(err as Error).stack ?? String(err)}\n`);
  process.exit(1);
});
