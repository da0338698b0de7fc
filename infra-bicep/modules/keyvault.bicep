// Key Vault in RBAC mode. The app reads secrets (KEY_VAULT_URL; e.g. the escalation model's key, or a
// Redis connection string under REDIS_SECRET_NAME when Entra auth is not used) as Key Vault Secrets User.

@description('Vault name (3-24 chars).')
@minLength(3)
@maxLength(24)
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('Principal ID of the app identity.')
param appPrincipalId string

@description('Optional principal (user or CI) that manages secrets. Empty = no grant.')
param deployerPrincipalId string = ''

@description('Type of deployerPrincipalId.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param deployerPrincipalType string = 'User'

@description('Purge protection. Recommended for production; it cannot be turned off once on, and a purged-protected vault blocks re-creating the same name for the retention period.')
param enablePurgeProtection bool = false

@description('Soft-delete retention in days.')
@minValue(7)
@maxValue(90)
param softDeleteRetentionInDays int = 90

var roleIds = {
  secretsUser: '4633458b-17de-408a-b874-0445c86b69e6'
  secretsOfficer: 'b86a8fe4-44ce-4948-aee5-eccb2c155cd7'
}

resource vault 'Microsoft.KeyVault/vaults@2023-07-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    tenantId: subscription().tenantId
    sku: {
      family: 'A'
      name: 'standard'
    }
    enableRbacAuthorization: true
    enableSoftDelete: true
    softDeleteRetentionInDays: softDeleteRetentionInDays
    // ARM rejects `false` here; leave the property out to keep purge protection off.
    enablePurgeProtection: enablePurgeProtection ? true : null
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
  }
}

resource appSecretsUser 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(vault.id, appPrincipalId, roleIds.secretsUser)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.secretsUser)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource deployerSecretsOfficer 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(deployerPrincipalId)) {
  name: guid(vault.id, deployerPrincipalId, roleIds.secretsOfficer)
  scope: vault
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.secretsOfficer)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

@description('Vault name.')
output name string = vault.name

@description('Vault URI, e.g. https://kv-xyz.vault.azure.net/ (KEY_VAULT_URL).')
output uri string = vault.properties.vaultUri
