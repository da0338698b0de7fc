/**
 * The one object storage: how every subsystem reaches a blob container of the storage account the `ModelStorage`
 * settings name (the rollout's kinds: models, rulesets, signals; the learning loop's decision log and labels): by
 * connection string (`UseDevelopmentStorage=true` for Azurite), or identity-based with `{blobServiceUri}` and the
 * one Azure credential (lib/platform/credential.ts; a user-assigned managed identity when a client id is given).
 * Without either, each user reads a local folder laid out as its container. The SDK loads only when a storage
 * account is configured.
 * @module
 */
import type { TokenCredential } from '@azure/identity';
import type { BlobServiceClient, ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import { AppError } from '../errors/errors';
import { azureCredential } from './credential';

/** How to reach the storage account holding the containers. */
export interface BlobStorageSettings {
  /** A connection string (`ModelStorage`, or `AzureWebJobsStorage` as a fallback), e.g. `UseDevelopmentStorage=true`. */
  readonly connectionString: string | undefined;
  /** Identity-based: `ModelStorage__blobServiceUri`, e.g. `https://acct.blob.core.windows.net`. */
  readonly blobServiceUri: string | undefined;
  /** Client id of a user-assigned managed identity (`ModelStorage__clientId`). */
  readonly clientId: string | undefined;
  /** The models container (`MODELS_CONTAINER`, default `models`). */
  readonly container: string;
}

/** Whether the settings name a storage account (else a local folder plays the container). */
export function blobConfigured(s: BlobStorageSettings): boolean {
  return s.connectionString !== undefined || s.blobServiceUri !== undefined;
}

/** Options of {@link openContainer}. */
export interface OpenContainerOptions {
  /** For identity-based access. Default the process's credential of `clientId` (lib/platform/credential.ts). */
  readonly credential?: TokenCredential | undefined;
  /** Storage client pipeline options (retries, HTTP client). Default the SDK's. */
  readonly pipeline?: StoragePipelineOptions | undefined;
  /** What the container holds, for the error messages, e.g. `the decision log`. Default `container "{container}"`. */
  readonly label?: string;
}

/**
 * The container `container` of the storage account `s` names, and the account's endpoint (for logs; never a secret).
 * @throws AppError `config_invalid` when neither a connection string nor a service URI is set, or the connection
 *   string is malformed (the message names `o.label` and the settings).
 */
export function openContainer(
  s: BlobStorageSettings,
  container: string,
  o: OpenContainerOptions = {},
): { client: ContainerClient; endpoint: string } {
  const pipeline = o.pipeline ?? {};
  const label = o.label ?? `container "${container}"`;
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { BlobServiceClient: Client } = require('@azure/storage-blob') as typeof import('@azure/storage-blob');
  let service: BlobServiceClient;
  if (s.connectionString !== undefined) {
    try {
      service = Client.fromConnectionString(s.connectionString, pipeline);
    } catch (err) {
      throw new AppError(
        'config_invalid',
        `The ModelStorage connection string (object storage for ${label}) is not valid.`,
        {
          cause: err,
        },
      );
    }
  } else if (s.blobServiceUri !== undefined) {
    const cred = o.credential ?? azureCredential(s.clientId);
    service = new Client(s.blobServiceUri, cred, pipeline);
  } else {
    throw new AppError(
      'config_invalid',
      `Object storage for ${label} needs ModelStorage (connection string) or ModelStorage__blobServiceUri.`,
    );
  }
  const url = new URL(service.url);
  return {
    client: service.getContainerClient(container),
    endpoint: `${url.origin}${url.pathname.replace(/\/$/, '')}`,
  };
}
