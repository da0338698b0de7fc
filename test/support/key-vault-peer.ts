/**
 * A local Key Vault peer for the real `SecretClient`: HTTPS on loopback with a throwaway self-signed
 * certificate (openssl), the vault's bearer challenge for anonymous requests (tenant `tenant-1`), and
 * `GET /secrets/{name}/` answered with `secret()` for a request carrying `Bearer kv-token`.
 */
import { execFileSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as https from 'node:https';
import type { AddressInfo } from 'node:net';
import * as os from 'node:os';
import * as path from 'node:path';

/** A running peer. */
export interface KeyVaultPeer {
  /** `https://127.0.0.1:{port}` */
  readonly url: string;
  /** One `METHOD /path authorization` line per request, in order. */
  readonly seen: string[];
  /** `SecretClient` options that trust the peer's certificate, skip the resource check and never retry. */
  readonly secretClientOptions: {
    disableChallengeResourceVerification: true;
    tlsOptions: { ca: Buffer };
    retryOptions: { maxRetries: 0 };
  };
  close(): Promise<void>;
}

/** The bearer token the peer accepts. */
export const KEY_VAULT_TOKEN = 'kv-token';

/** Starts a peer whose every secret has the value `secret()`. */
export async function startKeyVaultPeer(secret: () => string): Promise<KeyVaultPeer> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'kv-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-keyout', `${dir}/k.pem`, '-out', `${dir}/c.pem`].concat([
      '-days',
      '1',
      '-subj',
      '/CN=127.0.0.1',
      '-addext',
      'subjectAltName=IP:127.0.0.1',
    ]),
    { stdio: 'ignore' },
  );
  const ca = fs.readFileSync(`${dir}/c.pem`);
  const seen: string[] = [];
  const vault = https.createServer({ key: fs.readFileSync(`${dir}/k.pem`), cert: ca }, (req, res) => {
    const route = req.url?.split('?')[0] ?? '';
    seen.push(`${req.method} ${route} ${req.headers.authorization ?? 'anonymous'}`);
    if (req.headers.authorization !== `Bearer ${KEY_VAULT_TOKEN}`) {
      res
        .writeHead(401, {
          'www-authenticate':
            'Bearer authorization="https://login.microsoftonline.com/tenant-1", resource="https://vault.azure.net"',
        })
        .end();
      return;
    }
    const { port } = vault.address() as AddressInfo;
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(
      JSON.stringify({
        value: secret(),
        id: `https://127.0.0.1:${port}${route.replace(/\/$/, '')}/v1`,
        attributes: { enabled: true },
      }),
    );
  });
  await new Promise<void>((r) => vault.listen(0, '127.0.0.1', r));
  return {
    url: `https://127.0.0.1:${(vault.address() as AddressInfo).port}`,
    seen,
    secretClientOptions: {
      disableChallengeResourceVerification: true,
      tlsOptions: { ca },
      retryOptions: { maxRetries: 0 },
    },
    close: async () => {
      await new Promise<void>((r) => vault.close(() => r()));
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
}
