import { after, before } from 'node:test';
import { type InProcessHost as LocalHost, startHost } from './local-host';

/** The host of a suite started by {@link hostWithoutRedis}. */
export interface SuiteHost {
  /** The running host (throws before the suite's `before` ran). */
  readonly host: LocalHost;
  /** Its API base URL, `http://127.0.0.1:PORT/api`. */
  readonly api: string;
}

/**
 * Call inside a `describe`: before its tests, removes `REDIS_URL` from `process.env` (lists and state in memory)
 * and starts the local host with the app's real functions ({@link startHost}); after them, disposes it.
 */
export function hostWithoutRedis(): SuiteHost {
  let started: LocalHost | undefined;
  before(async () => {
    delete process.env['REDIS_URL'];
    started = await startHost();
  });
  after(() => started?.dispose());
  const running = (): LocalHost => {
    if (started === undefined) throw new Error('the suite host is not started yet (read it inside a test)');
    return started;
  };
  return {
    get host() {
      return running();
    },
    get api() {
      return `${running().url}/api`;
    },
  };
}
