/**
 * The arms of `npm run bench:cpu` (bench/cpu.ts): which servers run, under which settings, loaded with which
 * bodies, and which pairs of arms give each feature's marginal cost.
 */
import { CASES_SERVER } from './case-arms';
import { startServer, type Runtime, type ServerChild } from './children';
import { newUserPaymentBody, paymentBody } from '../test/support/load/payment-body';

const REDIS_URL = process.env['BENCH_REDIS_URL'] ?? 'redis://127.0.0.1:6379';

/**
 * `BENCH_BASELINE_APP`: another checkout (built, with its `node_modules`) whose service runs as the arm `baseline`,
 * so that a change's effect is measured side by side in the same rounds (`before_after`).
 */
export const BASELINE_APP = process.env['BENCH_BASELINE_APP'];
export const ALL_ARMS = [
  'naive_functions',
  'service',
  'no_rules',
  'no_decision_log',
  'telemetry_deployed',
  'workers_2',
  'review_10pct',
  'cases',
  'baseline',
  'service_node2',
  'telemetry_deployed_node2',
] as const;
export type Arm = (typeof ALL_ARMS)[number];
/** Arms on the second Node (`BENCH_NODE`, `BENCH_NODE_APP`: scripts/bench-node.mjs), run only when it is set. */
const NODE2_ARMS: readonly Arm[] = ['service_node2', 'telemetry_deployed_node2'];
/** `BENCH_CPU_ARMS=a,b,…`: only these arms (a tuning aid; the committed run has them all). */
const ONLY_ARMS = (process.env['BENCH_CPU_ARMS'] ?? '').split(',').filter((a) => a !== '');
export const ARMS: readonly Arm[] = ALL_ARMS.filter(
  (a) =>
    (ONLY_ARMS.length === 0 || ONLY_ARMS.includes(a)) &&
    (a !== 'baseline' || (BASELINE_APP ?? '') !== '') &&
    (!NODE2_ARMS.includes(a) || (process.env['BENCH_NODE'] ?? '') !== ''),
);
/** The features whose marginal cost is measured: [feature, arm with it on, arm with it off]. */
const ALL_MARGINALS: readonly (readonly [string, Arm, Arm])[] = [
  ['rules', 'service', 'no_rules'],
  ['decision_log', 'service', 'no_decision_log'],
  ['telemetry_deployed', 'telemetry_deployed', 'service'],
  ['telemetry_deployed_second_node', 'telemetry_deployed_node2', 'service_node2'],
  ['cases', 'cases', 'review_10pct'],
];
export const MARGINALS = ALL_MARGINALS.filter(([, on]) => ARMS.includes(on));

/** The body each arm is loaded with: the cases arms see first payments only, so 10 % of them go to review. */
export const bodyOf = (arm: Arm): (() => string) =>
  arm === 'review_10pct' || arm === 'cases' ? newUserPaymentBody : paymentBody;

/** What some arms need beyond the service's settings. */
export interface ArmSetup {
  readonly node2: Runtime | undefined;
  /** A rulesets folder whose ruleset sends 10 % of the payments to review. */
  readonly reviewRulesets: string;
  /** The case store's settings (PostgreSQL). */
  readonly caseEnv: Record<string, string>;
}

export async function startArm(
  arm: Arm,
  modelFile: string,
  serviceEnv: Record<string, string>,
  setup: ArmSetup,
): Promise<ServerChild> {
  const { node2 } = setup;
  switch (arm) {
    case 'review_10pct':
      return startServer('servers/service', { ...serviceEnv, RULESET_DIR: setup.reviewRulesets });
    case 'cases':
      return startServer(CASES_SERVER, {
        ...serviceEnv,
        RULESET_DIR: setup.reviewRulesets,
        ...setup.caseEnv,
      });
    case 'naive_functions':
      return startServer('servers/naive-functions', { BENCH_MODEL: modelFile, BENCH_REDIS_URL: REDIS_URL });
    case 'service':
      return startServer('servers/service', serviceEnv);
    case 'no_rules':
      return startServer('servers/service', { ...serviceEnv, RULESET_NAME: 'none' });
    case 'no_decision_log':
      return startServer('servers/service', { ...serviceEnv, DECISION_LOG_ENABLED: 'false' });
    case 'telemetry_deployed':
      return startServer('servers/service-traced', { ...serviceEnv, BENCH_TELEMETRY: 'deployed' });
    case 'workers_2':
      return startServer('servers/service', { ...serviceEnv, FUNCTIONS_WORKER_PROCESS_COUNT: '2' });
    case 'service_node2':
      return startServer('servers/service', serviceEnv, 120_000, node2);
    case 'telemetry_deployed_node2':
      return startServer('servers/service-traced', { ...serviceEnv, BENCH_TELEMETRY: 'deployed' }, 120_000, node2);
    case 'baseline':
      return startServer('servers/service', serviceEnv, 120_000, {
        node: process.execPath,
        app: BASELINE_APP as string,
      });
  }
}
