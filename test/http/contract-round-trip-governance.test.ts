/**
 * The answers of the lists, ruleset drafts and admin routes round-trip through their contracts' serializers: the JSON
 * a route sends, parsed, deep-equals what the service returned (every optional field given once, and the fewest).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import * as admin from '../../lib/contracts/admin';
import * as drafts from '../../lib/contracts/drafts';
import * as lists from '../../lib/contracts/lists';
import * as models from '../../lib/contracts/models';
import { compileContract, type Contract } from '../../lib/http/contract';

/** The JSON the route sends for `value`, parsed, deep-equals `value` as JSON. */
function roundTrips(contract: Contract, value: unknown): void {
  const sent = compileContract(contract).serialize(value as never);
  assert.deepEqual(JSON.parse(sent), JSON.parse(JSON.stringify(value)), `${contract.name} drops or changes a field`);
}

const report = {
  decisions: 120,
  labelled: 40,
  changes: { 'approve->review': 3, 'review->decline': 1 },
  fraudNowCaught: 2,
  goodNowBlocked: 1,
  goodNowHeld: 0,
  reviewQueue: { current: 10, candidate: 12, days: 7, growthPerDay: 0.3 },
  rules: { 'large-amount': { hits: 5, labelled: 4, fraud: 3, precision: 0.75, recall: 0.5 } },
  firingTogether: [{ rules: ['large-amount', 'new-device'], count: 2 }],
  notReplayable: [{ rule: 'velocity', fields: ['signals.velocity'] }],
  lists: {
    recordsWithoutMemberships: 3,
    currentEntries: ['blocked-users'],
    notReplayed: [{ list: 'new-list', rules: ['on-new-list'], records: 7 }],
    useCurrentLists: false,
  },
  truncated: false,
};

const draft = {
  name: 'fraud-rules',
  version: '1.1.0',
  document: { name: 'fraud-rules', version: '1.1.0', rules: [{ id: 'r', when: 'amount > 1', action: 'review' }] },
  author: 'lead-a',
  state: 'approved',
  backtest: {
    state: 'done',
    from: '2026-01-01T00:00:00.000Z',
    to: '2026-01-08T00:00:00.000Z',
    progress: { replayed: 120, total: 120 },
    result: report,
    at: '2026-01-08T00:00:01.000Z',
  },
  approver: 'lead-b',
  comment: 'fine',
  createdAt: '2026-01-08T00:00:00.000Z',
  updatedAt: '2026-01-08T00:00:02.000Z',
};

const rejection = {
  name: 'fraud-rules',
  version: '9.9.9',
  blobPath: 'rulesets/fraud-rules/9.9.9.json',
  check: 'validate',
  code: 'validation_failed',
  reason: 'bad rule',
  errors: [{ path: 'rules.0.when', message: 'unknown field', rule: 'r', column: 3 }],
  by: 'instance-1',
  at: '2026-01-08T00:00:00.000Z',
};

describe('contract serializers: lists', () => {
  it('the declared lists, a page, an add, a remove', () => {
    roundTrips(lists.listsPeople, {
      ruleset: { name: 'fraud-rules', version: '1.0.0' },
      lists: [{ name: 'blocked-users', key: 'userId', entries: 2 }],
    });
    roundTrips(lists.listsPeople, { ruleset: null, lists: [] });
    for (const c of [lists.listEntries, lists.listsPage]) {
      roundTrips(c, { entries: [{ value: 'u1', expiresAt: 1_767_225_600_000 }, { value: 'u2' }], cursor: 'abc' });
      roundTrips(c, { entries: [] });
    }
    for (const c of [lists.listEntriesAdd, lists.listsAdd]) {
      roundTrips(c, { name: 'blocked-users', added: 2, ttlSeconds: 60 });
      roundTrips(c, { name: 'blocked-users', added: 1 });
    }
    for (const c of [lists.listEntriesRemove, lists.listsRemove]) roundTrips(c, { name: 'blocked-users', removed: 1 });
  });
});

describe('contract serializers: ruleset drafts', () => {
  it('a draft with every field, the list (no documents), a running and a failed backtest', () => {
    for (const c of [drafts.rulesetDraft, drafts.rulesetDraftCreate, drafts.rulesetDraftApprove]) roundTrips(c, draft);
    const { document: _d, backtest: _b, approver: _a, comment: _c, ...fewest } = draft;
    roundTrips(drafts.rulesetDrafts, { drafts: [fewest, { ...fewest, state: 'draft' }] });
    roundTrips(drafts.rulesetDraftBacktest, draft.backtest);
    roundTrips(drafts.rulesetDraftBacktestRun, {
      state: 'running',
      from: draft.backtest.from,
      to: draft.backtest.to,
      progress: { replayed: 10, total: 120 },
      at: draft.backtest.at,
    });
    roundTrips(drafts.rulesetDraftBacktest, {
      state: 'failed',
      from: draft.backtest.from,
      to: draft.backtest.to,
      error: 'the learning store is not configured',
      at: draft.backtest.at,
    });
  });

  it('the diff, and the promote (the rollout status)', () => {
    roundTrips(drafts.rulesetDraftDiff, {
      serving: '1.0.0',
      rules: [
        {
          id: 'r',
          change: 'changed',
          lines: [
            { op: 'same', text: '"id": "r",' },
            { op: 'del', text: '"when": "amount > 2",' },
            { op: 'add', text: '"when": "amount > 1",' },
          ],
        },
      ],
      unchanged: 3,
      fields: [{ field: 'thresholds', lines: [{ op: 'add', text: '"review": 0.5' }] }],
    });
    roundTrips(drafts.rulesetDraftPromote, documentStatus);
    roundTrips(drafts.rulesetDraftPromote, { name: 'fraud-rules', generation: 0, history: [], rejections: [] });
  });
});

const pointer = {
  name: 'fraud',
  version: '1.1.0',
  blobPath: 'models/fraud/1.1.0.onnx',
  sha256: 'ab'.repeat(32),
  source: 'repository',
  publishedBy: 'instance-1',
  publishedAt: '2026-01-08T00:00:00.000Z',
};
const validation = {
  sizeBytes: 1000,
  batchSizes: [1, 8],
  goldenRows: 20,
  goldenSource: 'manifest',
  shift: { against: '1.0.0', meanAbs: 0.01, maxAbs: 0.05, rows: 20, bound: 0.1, exceeded: false },
  forced: false,
  loadMs: 12,
};
const distribution = (version: string) => ({
  version,
  n: 10,
  mean: 0.2,
  histogram: [{ from: 0, to: 0.1, count: 10 }],
});
const lastChange = { kind: 'traffic', version: '1.2.0', by: 'instance-1', at: '2026-01-08T00:00:00.000Z' };
/** Every kind's status view, every core field set. */
const core = {
  generation: 3,
  serving: '1.1.0',
  servingCandidate: '1.2.0',
  active: { version: '1.1.0', by: 'instance-1', at: '2026-01-08T00:00:00.000Z' },
  candidate: { version: '1.2.0', canaryPercent: 10, shadowPercent: 5 },
  previous: { version: '1.0.0' },
  history: [{ version: '1.0.0' }],
  lastChange,
  rejections: [rejection],
};
const documentStatus = {
  name: 'fraud-rules',
  ...core,
  shadow: { evaluated: 10, disagreements: { approve: { review: 1 } } },
};
const thisInstance = {
  instanceId: 'instance-1',
  store: 'redis',
  generation: 3,
  stale: false,
  desiredVersion: '1.1.0',
  reason: 'x',
  candidateVersion: '1.2.0',
  candidateError: 'y',
};
const modelStatus = {
  name: 'fraud',
  ...core,
  rejections: [{ ...rejection, name: 'fraud' }],
  shadow: { active: distribution('1.1.0'), candidate: distribution('1.2.0'), meanAbsDiff: null, errors: 0 },
  fleet: {
    versions: [
      { ...pointer, version: '1.2.0', validation },
      pointer,
      { ...pointer, version: '1.0.0', source: 'bundled' },
    ],
    instances: [
      {
        instanceId: 'instance-1',
        name: 'fraud',
        activeVersion: '1.1.0',
        candidateVersion: '1.2.0',
        generation: 3,
        stale: true,
        desiredVersion: '1.2.0',
        staleReason: 'load failed',
        reportedAtMs: 1_767_225_600_000,
      },
    ],
    thisInstance,
  },
};

describe('contract serializers: admin routes', () => {
  it('rulesets and signals: the rollout status', () => {
    const fewest = { name: 'fraud-rules', generation: 0, history: [], rejections: [] };
    for (const c of [...Object.values(admin.rulesetsAdmin), ...Object.values(admin.signalsAdmin)]) {
      roundTrips(c, documentStatus);
      roundTrips(c, fewest);
    }
  });

  it('models: the status with every field and the fewest, a change kept for four-eyes, the health', () => {
    roundTrips(models.modelsStatus, modelStatus);
    roundTrips(models.modelsList, { models: [modelStatus] });
    const fewest = {
      name: 'fraud',
      generation: 0,
      history: [],
      rejections: [],
      fleet: {
        versions: [],
        instances: [],
        thisInstance: { instanceId: 'i', store: 'in-process', generation: 0, stale: false },
      },
    };
    roundTrips(models.modelsStatus, fewest);
    roundTrips(models.modelsList, { models: [fewest] });
    for (const c of [models.modelsPromote, models.modelsTraffic, models.modelsRollback]) roundTrips(c, modelStatus);
    const pending = {
      name: 'fraud',
      pending: {
        change: 'traffic',
        version: '1.2.0',
        canaryPercent: 10,
        shadowPercent: 0,
        requestedBy: 'lead-a',
        at: '2026-01-08T00:00:00.000Z',
      },
      awaiting: 'another lead asks for the same model change',
    };
    for (const c of [models.modelsPromote, models.modelsTraffic]) roundTrips(c, pending);
    roundTrips(models.modelsHealth, {
      status: 'not_ready',
      model: { name: 'fraud', version: '1.1.0' },
      executionProviders: ['cpu'],
      fallbackReason: null,
      reason: 'waiting',
      waitingFor: [{ kind: 'ruleset', name: 'fraud-rules', serving: null, active: '1.1.0', reason: 'loading' }],
      lastCheckAt: null,
      probeIntervalSec: 30,
      fleet: thisInstance,
    });
  });
});
