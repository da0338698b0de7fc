import assert from 'node:assert/strict';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { loadConfig } from '../../lib/config/config';
import { AppError } from '../../lib/errors/errors';

describe('config', () => {
  it('has working defaults for an empty environment, frozen', () => {
    const c = loadConfig({});
    assert.equal(c.model.name, 'fraud');
    assert.equal(path.basename(c.model.dir), 'models');
    assert.deepEqual(c.ort.executionProviders, ['cpu']);
    assert.equal(c.inference.batchMaxSize, 64);
    assert.equal(c.inference.batchWindowMs, 5);
    assert.equal(c.context.l2TtlSec, 240);
    assert.equal(c.redis.url, undefined);
    assert.ok(Object.isFrozen(c) && Object.isFrozen(c.inference) && Object.isFrozen(c.ort.executionProviders));
  });

  it('parses values and treats empty strings as unset', () => {
    const c = loadConfig({
      BATCH_MAX_SIZE: '32',
      ORT_EXECUTION_PROVIDERS: 'CUDA, cpu',
      MODEL_VERSION: '',
      REDIS_URL: 'redis://x:6379',
    });
    assert.equal(c.inference.batchMaxSize, 32);
    assert.deepEqual(c.ort.executionProviders, ['cuda', 'cpu']);
    assert.equal(c.model.version, undefined);
    assert.equal(c.redis.url, 'redis://x:6379');
  });

  it('keeps the L1 TTL at most the L2 TTL', () => {
    assert.equal(loadConfig({ CONTEXT_L1_TTL_SEC: '600', CONTEXT_L2_TTL_SEC: '120' }).context.l1TtlSec, 120);
  });

  it('fails fast naming every bad setting, without echoing values', () => {
    try {
      loadConfig({
        BATCH_MAX_SIZE: 'lots',
        BATCH_WINDOW_MS: '-1',
        ORT_EXECUTION_PROVIDERS: 'tpu',
        MODEL_NAME: 'Bad Name',
        KEY_VAULT_URL: 'not a url s3cr3t',
      });
      assert.fail('expected config_invalid');
    } catch (err) {
      assert.ok(err instanceof AppError);
      assert.equal(err.code, 'config_invalid');
      const names = err.errors.map((e) => e.path.split('.')[0]).sort();
      assert.deepEqual(names, [
        'BATCH_MAX_SIZE',
        'BATCH_WINDOW_MS',
        'KEY_VAULT_URL',
        'MODEL_NAME',
        'ORT_EXECUTION_PROVIDERS',
      ]);
      assert.ok(!err.message.includes('s3cr3t'));
    }
  });
});
