// Redis for the app (context L2 cache, idempotency records, fleet pointer pub/sub), Microsoft Entra
// authentication only (access keys off). The app connects over TLS with its identity's object ID as the
// username and an Entra token as the password (REDIS_HOST = host:port, REDIS_ENTRA_OBJECT_ID, AZURE_CLIENT_ID).
// Redis is an accelerator: scoring goes on without it.
//
//   kind 'managed' (default)  Azure Managed Redis: Microsoft.Cache/redisEnterprise + databases/default
//                             (TLS port 10000) + databases/accessPolicyAssignments for the app identity.
//   kind 'classic'            Azure Cache for Redis (Microsoft.Cache/redis, TLS port 6380), which Microsoft
//                             is retiring; kept for subscriptions or regions without Managed Redis.

@description('Cache name.')
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('managed = Azure Managed Redis (redisEnterprise, port 10000); classic = Azure Cache for Redis (port 6380).')
@allowed([
  'managed'
  'classic'
])
param kind string = 'managed'

@description('Azure Managed Redis SKU (kind managed). Balanced_B1 is the smallest with high availability that fits the context cache of one region.')
@allowed([
  'Balanced_B0'
  'Balanced_B1'
  'Balanced_B3'
  'Balanced_B5'
  'MemoryOptimized_M10'
  'ComputeOptimized_X3'
])
param managedSkuName string = 'Balanced_B1'

@description('Clustering policy (kind managed). NoCluster: one shard, no proxy, every command works like a single Redis server (the app uses MULTI across two keys and Lua scripts); up to 25 GB SKUs. EnterpriseCluster: a proxy in front of shards.')
@allowed([
  'NoCluster'
  'EnterpriseCluster'
])
param managedClusteringPolicy string = 'NoCluster'

@description('Azure Cache for Redis SKU (kind classic). Standard gives a replica and an SLA; Basic is for dev only.')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param classicSkuName string = 'Standard'

@description('Azure Cache for Redis size (kind classic): C0-C6, or P1-P5 for Premium.')
@minValue(0)
@maxValue(6)
param classicCapacity int = 1

@description('Principal (object) ID of the app identity.')
param appPrincipalId string

var isManaged = kind == 'managed'

// ---------------------------------------------------------------------------------------------
// Azure Managed Redis
// ---------------------------------------------------------------------------------------------

resource managedCluster 'Microsoft.Cache/redisEnterprise@2025-07-01' = if (isManaged) {
  name: name
  location: location
  tags: tags
  sku: {
    name: managedSkuName
  }
  properties: {
    minimumTlsVersion: '1.2'
    highAvailability: 'Enabled'
  }
}

resource managedDatabase 'Microsoft.Cache/redisEnterprise/databases@2025-07-01' = if (isManaged) {
  parent: managedCluster
  name: 'default'
  properties: {
    clientProtocol: 'Encrypted'
    port: 10000
    clusteringPolicy: managedClusteringPolicy
    evictionPolicy: 'VolatileLRU'
    accessKeysAuthentication: 'Disabled'
  }
}

// Only the built-in "default" access policy exists on Managed Redis (full data access, no admin commands).
resource managedAppAccess 'Microsoft.Cache/redisEnterprise/databases/accessPolicyAssignments@2025-07-01' = if (isManaged) {
  parent: managedDatabase
  name: 'scoringapp'
  properties: {
    accessPolicyName: 'default'
    user: {
      objectId: appPrincipalId
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Azure Cache for Redis (retiring)
// ---------------------------------------------------------------------------------------------

resource classicCache 'Microsoft.Cache/redis@2024-11-01' = if (!isManaged) {
  name: name
  location: location
  tags: tags
  properties: {
    sku: {
      name: classicSkuName
      family: classicSkuName == 'Premium' ? 'P' : 'C'
      capacity: classicCapacity
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

// Data Contributor: reads, writes and pub/sub, but not dangerous/admin commands.
resource classicAppAccess 'Microsoft.Cache/redis/accessPolicyAssignments@2024-11-01' = if (!isManaged) {
  parent: classicCache
  name: appPrincipalId
  properties: {
    accessPolicyName: 'Data Contributor'
    objectId: appPrincipalId
    objectIdAlias: 'scoring-app'
  }
}

@description('Cache name.')
output name string = name

@description('Host name, e.g. redis-xyz.swedencentral.redis.azure.net (managed) or redis-xyz.redis.cache.windows.net (classic).')
output hostName string = isManaged ? managedCluster!.properties.hostName : classicCache!.properties.hostName

@description('TLS port: 10000 (managed) or 6380 (classic).')
output port int = isManaged ? 10000 : 6380

@description('REDIS_HOST value: host:port.')
output endpoint string = isManaged ? '${managedCluster!.properties.hostName}:10000' : '${classicCache!.properties.hostName}:6380'
