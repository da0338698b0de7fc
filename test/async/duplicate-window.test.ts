import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import { testConfig } from '../support/config';
import type { AppError } from '../../lib/errors/errors';

const root = path.resolve(__dirname, '../../..');
const bicep = (file: string): string => readFileSync(path.join(root, 'infra-bicep', file), 'utf8');

describe('the results topic duplicate-detection window covers the idempotency TTL', () => {
  it('fails fast, naming both settings, when IDEMPOTENCY_TTL_SEC exceeds RESULTS_DUPLICATE_WINDOW_SEC', () => {
    assert.throws(
      () => testConfig({ IDEMPOTENCY_TTL_SEC: '43200', RESULTS_DUPLICATE_WINDOW_SEC: '600' }),
      (e: AppError) =>
        e.code === 'config_invalid' &&
        JSON.stringify(e.errors?.map((x) => x.path).sort()) ===
          JSON.stringify(['IDEMPOTENCY_TTL_SEC', 'RESULTS_DUPLICATE_WINDOW_SEC']),
    );
  });

  it('accepts a TTL up to the window; the defaults are 6 h both', () => {
    const d = testConfig({});
    assert.equal(d.idempotency.ttlSec, 21_600);
    assert.equal(d.serviceBus.duplicateWindowSec, 21_600);
    assert.equal(
      testConfig({ IDEMPOTENCY_TTL_SEC: '3600', RESULTS_DUPLICATE_WINDOW_SEC: '3600' }).idempotency.ttlSec,
      3600,
    );
    assert.throws(
      () => testConfig({ RESULTS_DUPLICATE_WINDOW_SEC: String(7 * 86_400 + 1) }),
      /RESULTS_DUPLICATE_WINDOW_SEC/,
    );
  });

  it('infra-bicep deploys the window from the same value it gives the app as both settings', () => {
    const main = bicep('main.bicep');
    const sb = bicep('modules/servicebus.bicep');
    assert.match(main, /param idempotencyTtlSec int = 21600\b/);
    assert.match(sb, /param duplicateDetectionWindowSec int = 21600\b/);
    assert.match(sb, /duplicateDetectionHistoryTimeWindow: 'PT\$\{duplicateDetectionWindowSec\}S'/);
    assert.match(main, /duplicateDetectionWindowSec: idempotencyTtlSec\b/);
    assert.match(main, /name: 'IDEMPOTENCY_TTL_SEC'\s+value: string\(idempotencyTtlSec\)/);
    assert.match(
      main,
      /name: 'RESULTS_DUPLICATE_WINDOW_SEC'\s+value: string\(serviceBus\.outputs\.duplicateDetectionWindowSec\)/,
    );
  });
});
