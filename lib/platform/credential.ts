/**
 * The Azure credential of the process: one `DefaultAzureCredential` per managed identity (a user-assigned identity's
 * client id, or none for the system-assigned one and the developer's sign-in), made on first use and shared by every
 * client that authenticates as it (Redis, PostgreSQL, Key Vault, Blob Storage, Service Bus, Azure OpenAI), so its
 * token cache and its discovery of where tokens come from are paid once. `@azure/identity` loads on the first call:
 * `npm start` on defaults never needs it.
 */
import type { TokenCredential } from '@azure/identity';

/** Makes the credential of one identity (`undefined`: the default chain without a user-assigned identity). */
export type CredentialFactory = (managedIdentityClientId: string | undefined) => TokenCredential;

/** `new DefaultAzureCredential({ managedIdentityClientId })`, loading `@azure/identity` on the first call. */
export const defaultAzureCredential: CredentialFactory = (managedIdentityClientId) => {
  // loaded only when an Azure service is configured (start-up time of `npm start`)
  // eslint-disable-next-line @typescript-eslint/no-require-imports
  const { DefaultAzureCredential } = require('@azure/identity') as typeof import('@azure/identity');
  return new DefaultAzureCredential(managedIdentityClientId === undefined ? {} : { managedIdentityClientId });
};

/** The credentials of a process, one per identity, each made once by its factory. */
export class AzureCredentials {
  private readonly made = new Map<string, TokenCredential>();
  constructor(private readonly create: CredentialFactory = defaultAzureCredential) {}

  /** The credential of the identity `managedIdentityClientId` (none or empty: the default chain's). */
  for(managedIdentityClientId?: string): TokenCredential {
    const id = managedIdentityClientId === '' ? undefined : managedIdentityClientId;
    const key = id ?? '';
    let c = this.made.get(key);
    if (c === undefined) this.made.set(key, (c = this.create(id)));
    return c;
  }
}

/** The process's credentials: what a subsystem uses when it is handed none. */
export const processCredentials = new AzureCredentials();

/** The process's credential of `managedIdentityClientId` ({@link processCredentials}). */
export function azureCredential(managedIdentityClientId?: string): TokenCredential {
  return processCredentials.for(managedIdentityClientId);
}
