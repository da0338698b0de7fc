// Storage account: Functions host storage (AzureWebJobsStorage), the `models` container the model
// blobs live in (ModelStorage connection), and, for the Flex plan, the deployment-package container.
// Shared-key access is off: every client (host, app, deployer) authenticates with Entra ID.

@description('Storage account name (3-24 lower-case letters and digits).')
@minLength(3)
@maxLength(24)
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('Container holding model artifacts: {name}/{version}.onnx + {name}/{version}.json.')
param modelsContainerName string = 'models'

@description('More private containers to create (e.g. the Flex deployment-package container).')
param extraContainerNames array = []

@description('Principal ID of the app identity (host storage + model blobs + blob-trigger queues).')
param appPrincipalId string

@description('Optional principal (user or CI) that uploads models. Empty = no grant.')
param deployerPrincipalId string = ''

@description('Type of deployerPrincipalId.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param deployerPrincipalType string = 'User'

@description('Replication SKU.')
@allowed([
  'Standard_LRS'
  'Standard_ZRS'
  'Standard_GRS'
])
param skuName string = 'Standard_LRS'

var roleIds = {
  blobDataOwner: 'b7e6dc6d-f1e8-4753-8033-0f276bb0955b'
  blobDataContributor: 'ba92f5b4-2d11-453d-a403-e96b0029c9fe'
  queueDataContributor: '974c5e8b-45b9-4653-ba55-5f855dd0fb88'
  tableDataContributor: '0a9a7e1f-b9d0-4cc4-a60d-0319b160aaa3'
}

// Host storage with an identity needs Blob Data Owner; blob triggers (poison queue, receipts) need
// Queue Data Contributor; Table Data Contributor covers host features that keep state in tables.
var appRoleIds = [
  roleIds.blobDataOwner
  roleIds.queueDataContributor
  roleIds.tableDataContributor
]

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' = {
  name: name
  location: location
  tags: tags
  kind: 'StorageV2'
  sku: {
    name: skuName
  }
  properties: {
    accessTier: 'Hot'
    allowBlobPublicAccess: false
    allowSharedKeyAccess: false
    allowCrossTenantReplication: false
    defaultToOAuthAuthentication: true
    minimumTlsVersion: 'TLS1_2'
    supportsHttpsTrafficOnly: true
    publicNetworkAccess: 'Enabled'
    networkAcls: {
      bypass: 'AzureServices'
      defaultAction: 'Allow'
    }
  }
}

resource blobService 'Microsoft.Storage/storageAccounts/blobServices@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    // Versioning keeps every uploaded model artifact recoverable, even after an overwrite.
    isVersioningEnabled: true
    deleteRetentionPolicy: {
      enabled: true
      days: 7
    }
    containerDeleteRetentionPolicy: {
      enabled: true
      days: 7
    }
  }
}

resource containers 'Microsoft.Storage/storageAccounts/blobServices/containers@2023-05-01' = [
  for containerName in union([modelsContainerName], extraContainerNames): {
    parent: blobService
    name: containerName
    properties: {
      publicAccess: 'None'
    }
  }
]

resource appRoleAssignments 'Microsoft.Authorization/roleAssignments@2022-04-01' = [
  for roleId in appRoleIds: {
    name: guid(account.id, appPrincipalId, roleId)
    scope: account
    properties: {
      roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleId)
      principalId: appPrincipalId
      principalType: 'ServicePrincipal'
    }
  }
]

// Lets `az storage blob upload --auth-mode login` publish models.
resource deployerBlobContributor 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(deployerPrincipalId)) {
  name: guid(account.id, deployerPrincipalId, roleIds.blobDataContributor)
  scope: account
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.blobDataContributor)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

@description('Storage account name.')
output name string = account.name

@description('Storage account resource ID.')
output id string = account.id

@description('Blob endpoint, with a trailing slash.')
output blobEndpoint string = account.properties.primaryEndpoints.blob

@description('Queue endpoint, with a trailing slash.')
output queueEndpoint string = account.properties.primaryEndpoints.queue

@description('Models container name.')
output modelsContainerName string = modelsContainerName
