// The one user-assigned managed identity the function app runs as. Every data-plane grant
// (Service Bus, Storage, Key Vault, Redis, ACR) is made to this identity in the module that owns
// the resource, so the grants are created before the app that needs them.

@description('Identity name.')
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

resource identity 'Microsoft.ManagedIdentity/userAssignedIdentities@2023-01-31' = {
  name: name
  location: location
  tags: tags
}

@description('Resource ID (used in identity blocks, registry pulls and KEDA scale rules).')
output id string = identity.id

@description('Identity name.')
output name string = identity.name

@description('Client (application) ID: AZURE_CLIENT_ID and the __clientId of every identity-based connection.')
output clientId string = identity.properties.clientId

@description('Object (principal) ID: role assignments and the Redis username (REDIS_ENTRA_OBJECT_ID).')
output principalId string = identity.properties.principalId
