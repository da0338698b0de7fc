/**
 * The one way every kind of the rollout reaches its blob container (models, rulesets, signals): by connection string
 * (`UseDevelopmentStorage=true` for Azurite), or identity-based with `{blobServiceUri}` and `DefaultAzureCredential`
 * (a user-assigned managed identity when a client id is given). Without either, each kind reads a local folder laid
 * out as the container. The SDK loads only when a storage account is configured.
 * @module
 */
import type { TokenCredential } from '@azure/identity';
import { azureCredential } from '../platform/credential';
import type { BlobServiceClient, ContainerClient, StoragePipelineOptions } from '@azure/storage-blob';
import { AppError } from '../errors/errors';

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
  readonly pipeline?: StoragePipelineOptions;
}

/**
 * The container `container` of the storage account `s` names, and the account's endpoint (for logs; never a secret).
 * @throws AppError `config_invalid` when neither a connection string nor a service URI is set, or the connection
 *   string is malformed.
 */
export function openContainer(
  s: BlobStorageSettings,
  container: string,
  o: OpenContainerOptions = {},
): { client: ContainerClient; endpoint: string } {
  const pipeline = o.pipeline ?? {};
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { BlobServiceClient: Client } = require('@azure/storage-blob') as typeof import('@azure/storage-blob');
  let service: BlobServiceClient;
  if (s.connectionString !== undefined) {
    try {
      service = Client.fromConnectionString(s.connectionString, pipeline);
    } catch (err) {
      throw new AppError('config_invalid', 'The model storage connection string is not valid.', { cause: err });
    }
  } else if (s.blobServiceUri !== undefined) {
    const cred = o.credential ?? azureCredential(s.clientId);
    service = new Client(s.blobServiceUri, cred, pipeline);
  } else {
    throw new AppError(
      'config_invalid',
      'Model storage needs ModelStorage (connection string) or ModelStorage__blobServiceUri.',
    );
  }
  const url = new URL(service.url);
  return {
    client: service.getContainerClient(container),
    endpoint: `${url.origin}${url.pathname.replace(/\/$/, '')}`,
  };
}
