import { batchedBackendFactory } from '../../lib/inference/backend-factory';
import { InlineOrtBackend } from '../../lib/inference/ort-session';
import { WorkerPool } from '../../lib/inference/worker-pool';
import { backendContract } from './support/backend-contract';

const session = { executionProviders: ['cpu'], intraOpThreads: 1, graphOptimization: 'all' } as const;
const batching = { batchMaxSize: 4, batchMaxSizeGpu: 2, batchWindowMs: 2, queueMax: 64, workers: 2, session };

backendContract('InlineOrtBackend', (model) => InlineOrtBackend.create(model, session));
backendContract('WorkerPool (2 workers)', (model) => WorkerPool.create(model, { size: 2, session }));
backendContract('MicroBatcher over a worker pool', (model) =>
  batchedBackendFactory({ ...batching, mode: 'workers' }).load(model),
);
backendContract('MicroBatcher over an inline session', (model) =>
  batchedBackendFactory({ ...batching, mode: 'inline' }).load(model),
);
