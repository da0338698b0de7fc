import { spawn, type ChildProcess } from 'node:child_process';
import { createServer } from 'node:net';
import * as path from 'node:path';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { stopChild } from '../../support/child-process';

/** Azurite's well-known development account key (public, documented by Microsoft). */
const DEV_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';

/** A free TCP port on 127.0.0.1. */
export function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** A running in-memory Azurite blob service. */
export interface Azurite {
  /** Connection string for this instance (devstoreaccount1 on its port). */
  readonly connectionString: string;
  /** A client of the container, created. */
  container(name: string): Promise<ContainerClient>;
  stop(): Promise<void>;
}

/** Starts `azurite-blob` on a free port (in memory, silent) and waits until it answers (at most 30 s). */
export async function startAzurite(): Promise<Azurite> {
  const port = await freePort();
  const bin = path.resolve(__dirname, '../../../../node_modules/.bin/azurite-blob');
  const child: ChildProcess = spawn(
    bin,
    [
      '--blobHost',
      '127.0.0.1',
      '--blobPort',
      String(port),
      '--inMemoryPersistence',
      '--silent',
      '--skipApiVersionCheck',
      '--disableTelemetry',
    ],
    { stdio: 'ignore' },
  );
  const connectionString = `DefaultEndpointsProtocol=http;AccountName=devstoreaccount1;AccountKey=${DEV_KEY};BlobEndpoint=http://127.0.0.1:${port}/devstoreaccount1;`;
  const service = BlobServiceClient.fromConnectionString(connectionString, { retryOptions: { maxTries: 1 } });
  const until = Date.now() + 30_000;
  for (;;) {
    try {
      await service.getProperties();
      break;
    } catch (err) {
      if (Date.now() > until || child.exitCode !== null) {
        child.kill('SIGKILL');
        throw new Error(`Azurite did not start: ${(err as Error).message}`);
      }
      await new Promise((r) => setTimeout(r, 100));
    }
  }
  return {
    connectionString,
    async container(name) {
      const c = service.getContainerClient(name);
      await c.createIfNotExists();
      return c;
    },
    stop: async () => {
      await stopChild(child, 'Azurite to exit after SIGTERM');
    },
  };
}
