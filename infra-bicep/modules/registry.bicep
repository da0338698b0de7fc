// Azure Container Registry for the function image (Container Apps hosting only). The app identity
// pulls with AcrPull; azd (or CI) pushes as the deployer.

@description('Registry name (5-50 letters and digits).')
@minLength(5)
@maxLength(50)
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('SKU. Premium enables artifact streaming, which shortens GPU cold starts on large images.')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param skuName string = 'Standard'

@description('Principal ID of the app identity (pulls images).')
param appPrincipalId string

@description('Optional principal (user or CI) that pushes images. Empty = no grant (Owner/Contributor can push anyway).')
param deployerPrincipalId string = ''

@description('Type of deployerPrincipalId.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param deployerPrincipalType string = 'User'

var roleIds = {
  acrPull: '7f951dda-4ed3-4680-a7ca-43fe172d538d'
  acrPush: '8311e382-0749-4cb8-b61a-304f252e45ec'
}

resource registry 'Microsoft.ContainerRegistry/registries@2023-07-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: skuName
  }
  properties: {
    adminUserEnabled: false
    anonymousPullEnabled: false
    publicNetworkAccess: 'Enabled'
  }
}

resource appPull 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(registry.id, appPrincipalId, roleIds.acrPull)
  scope: registry
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.acrPull)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource deployerPush 'Microsoft.Authorization/roleAssignments@2022-04-01' = if (!empty(deployerPrincipalId)) {
  name: guid(registry.id, deployerPrincipalId, roleIds.acrPush)
  scope: registry
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.acrPush)
    principalId: deployerPrincipalId
    principalType: deployerPrincipalType
  }
}

@description('Registry name.')
output name string = registry.name

@description('Login server, e.g. crxyz.azurecr.io.')
output loginServer string = registry.properties.loginServer
