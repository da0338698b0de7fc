/**
 * `FUNCTIONS_WORKER_PROCESS_COUNT` under the local host: N processes, each with its own module state, HTTP
 * invocations in turn, the throttle applied once for the whole host, `appTerminate` in every process on dispose, and
 * a bad count refused naming the setting.
 */
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { LocalHost } from '../../local/host';
import { workerProcessCount } from '../../local/worker-processes';

const dir = mkdtempSync(path.join(tmpdir(), 'test-workers-'));
const terminated = path.join(dir, 'terminated');
process.env['PID_APP_TERMINATED'] = terminated;

describe('worker processes (FUNCTIONS_WORKER_PROCESS_COUNT=3)', () => {
  let host: LocalHost;
  let disposed = false;
  before(async () => {
    host = await LocalHost.create({
      port: 0,
      appModules: [path.join(__dirname, 'fixtures', 'pid-app.js')],
      log: () => undefined,
      workerProcesses: 3,
      throttles: { maxConcurrentRequests: 1, maxOutstandingRequests: 1 },
    });
  });
  after(async () => {
    if (!disposed) await host.dispose();
    rmSync(dir, { recursive: true, force: true });
  });

  it('hands invocations in turn to 3 processes, each with its own module state', async () => {
    const seen: { pid: number; served: number }[] = [];
    for (let i = 0; i < 9; i++) seen.push((await (await fetch(`${host.url}/api/whoami`)).json()) as (typeof seen)[0]);
    const pids = seen.map((s) => s.pid);
    assert.equal(new Set(pids).size, 3, `three processes: ${pids.join(', ')}`);
    assert.ok(pids.includes(process.pid), "the host's own process is one of them");
    for (let i = 3; i < 9; i++) assert.equal(pids[i], pids[i - 3], 'in turn');
    assert.deepEqual(
      seen.map((s) => s.served),
      [1, 1, 1, 2, 2, 2, 3, 3, 3],
      'each process counts only what it served',
    );
  });

  it('throttles once for the whole host: 1 concurrent + 1 outstanding lets one of three slow requests run', async () => {
    const statuses = await Promise.all([0, 1, 2].map(async () => (await fetch(`${host.url}/api/slow`)).status));
    assert.deepEqual(
      statuses.sort(),
      [200, 429, 429],
      'three processes could run three at once: the throttle is the host-wide one',
    );
  });

  it('runs appTerminate in every process on dispose', async () => {
    await host.dispose();
    disposed = true;
    const pids = readFileSync(terminated, 'utf8').trim().split('\n');
    assert.equal(new Set(pids).size, 3, `appTerminate in: ${pids.join(', ')}`);
  });
});

describe('workerProcessCount', () => {
  it('defaults to 1 and takes 1 to 10', () => {
    assert.equal(workerProcessCount(undefined), 1);
    assert.equal(workerProcessCount(' '), 1);
    assert.equal(workerProcessCount('10'), 10);
  });
  it('refuses anything else naming the setting', () => {
    for (const bad of ['0', '11', '1.5', 'two'])
      assert.throws(
        () => workerProcessCount(bad),
        /FUNCTIONS_WORKER_PROCESS_COUNT must be a whole number from 1 to 10/,
      );
  });
});
