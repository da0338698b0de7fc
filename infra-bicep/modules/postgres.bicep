// Azure Database for PostgreSQL Flexible Server for the review cases (docs/cases.md), Microsoft Entra
// authentication only (password authentication off: no password exists anywhere). The app's user-assigned
// managed identity is the server's Entra administrator, so it can apply the case store's migrations; the app
// signs in as that identity (PG_USER = its name) with an Entra token as the password (PG_ENTRA_AUTH=true,
// AZURE_CLIENT_ID), over TLS.

@description('Server name.')
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('Compute SKU. Standard_B1ms (Burstable, 1 vCore, 2 GiB) fits a case queue of a few analysts.')
param skuName string = 'Standard_B1ms'

@description('Compute tier of skuName.')
@allowed([
  'Burstable'
  'GeneralPurpose'
  'MemoryOptimized'
])
param skuTier string = 'Burstable'

@description('Storage size, GiB.')
param storageSizeGB int = 32

@description('Database of the cases (PG_DATABASE).')
param databaseName string = 'cases'

@description('Name of the app identity (the Entra principal the app signs in as; PG_USER).')
param appIdentityName string

@description('Object (principal) ID of the app identity.')
param appPrincipalId string

resource server 'Microsoft.DBforPostgreSQL/flexibleServers@2024-08-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: skuName
    tier: skuTier
  }
  properties: {
    version: '16'
    storage: {
      storageSizeGB: storageSizeGB
    }
    authConfig: {
      activeDirectoryAuth: 'Enabled'
      passwordAuth: 'Disabled'
      tenantId: subscription().tenantId
    }
    backup: {
      backupRetentionDays: 7
      geoRedundantBackup: 'Disabled'
    }
    highAvailability: {
      mode: 'Disabled'
    }
    network: {
      publicNetworkAccess: 'Enabled'
    }
  }
}

// Connections from Azure services only (the function app's outbound addresses are Azure's); TLS is enforced by
// the server (require_secure_transport is on by default).
resource allowAzure 'Microsoft.DBforPostgreSQL/flexibleServers/firewallRules@2024-08-01' = {
  parent: server
  name: 'AllowAllAzureServicesAndResourcesWithinAzureIps'
  properties: {
    startIpAddress: '0.0.0.0'
    endIpAddress: '0.0.0.0'
  }
}

resource database 'Microsoft.DBforPostgreSQL/flexibleServers/databases@2024-08-01' = {
  parent: server
  name: databaseName
  properties: {
    charset: 'UTF8'
    collation: 'en_US.utf8'
  }
}

resource appAdmin 'Microsoft.DBforPostgreSQL/flexibleServers/administrators@2024-08-01' = {
  parent: server
  name: appPrincipalId
  properties: {
    principalType: 'ServicePrincipal'
    principalName: appIdentityName
    tenantId: subscription().tenantId
  }
  dependsOn: [
    allowAzure
    database
  ]
}

@description('Server host name (PG_HOST).')
output host string = server.properties.fullyQualifiedDomainName

@description('Database of the cases (PG_DATABASE).')
output databaseName string = database.name

@description('The user the app signs in as (PG_USER): the app identity, an Entra administrator of the server.')
output user string = appAdmin.properties.principalName
