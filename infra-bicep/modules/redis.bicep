// Azure Cache for Redis with Microsoft Entra authentication only (access keys disabled). The app's
// identity gets a data access policy assignment; it connects over TLS (port 6380) with its object ID
// as the username and an Entra token as the password (REDIS_HOST + REDIS_ENTRA_OBJECT_ID + AZURE_CLIENT_ID).
// Redis is an accelerator for the app (context L2 cache, fleet pointer pub/sub): scoring goes on without it.

@description('Cache name.')
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('SKU. Standard gives a replica and an SLA; Basic is for dev only.')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param skuName string = 'Standard'

@description('Size within the SKU family (C0-C6, or P1-P5 for Premium).')
@minValue(0)
@maxValue(6)
param capacity int = 1

@description('Principal (object) ID of the app identity.')
param appPrincipalId string

@description('Built-in data access policy for the app. Data Contributor allows reads, writes and pub/sub, but not dangerous/admin commands.')
@allowed([
  'Data Owner'
  'Data Contributor'
  'Data Reader'
])
param appAccessPolicyName string = 'Data Contributor'

resource cache 'Microsoft.Cache/redis@2024-11-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    sku: {
      name: skuName
      family: skuName == 'Premium' ? 'P' : 'C'
      capacity: capacity
    }
    redisVersion: '6'
    enableNonSslPort: false
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
    disableAccessKeyAuthentication: true
    redisConfiguration: {
      'aad-enabled': 'true'
    }
  }
}

resource appAccess 'Microsoft.Cache/redis/accessPolicyAssignments@2024-11-01' = {
  parent: cache
  name: appPrincipalId
  properties: {
    accessPolicyName: appAccessPolicyName
    objectId: appPrincipalId
    objectIdAlias: 'scoring-app'
  }
}

@description('Cache name.')
output name string = cache.name

@description('Host name, e.g. redis-xyz.redis.cache.windows.net (REDIS_HOST).')
output hostName string = cache.properties.hostName

@description('TLS port (6380).')
output sslPort int = cache.properties.sslPort
