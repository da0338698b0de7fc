/**
 * A second app instance in its own process (started by the fleet test): the local Functions host with
 * the app's functions, configured by the environment the test passes. Prints `LISTENING <port>`.
 * It runs no blob feeder: a blob trigger fires on one instance only.
 */
import { startHost } from '../../support/local-host';

async function main(): Promise<void> {
  const host = await startHost();
  process.stdout.write(`LISTENING ${host.port}\n`);
  process.on('SIGTERM', () => void host.dispose().finally(() => process.exit(0)));
}

// `node --test dist/test/` loads every file, this one included: only start when asked to.
if (process.env['ROLLOUT_TEST_INSTANCE'] === '1') {
  main().catch((err: unknown) => {
    process.stderr.write(`instance failed: ${String(err)}\n`);
    process.exit(1);
  });
}
