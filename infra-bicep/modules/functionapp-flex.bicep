// CPU alternative to Container Apps: a code-deployed function app on the Flex Consumption plan (FC1).
// Flex scales per function group on the platform (HTTP concurrency per instance, Service Bus backlog
// for the queue trigger); `alwaysReady` keeps warm instances so the model stays loaded.
// Flex has no GPUs and no custom containers: onnxruntime-node runs its CPU provider from the package.
// Flex rejects FUNCTIONS_WORKER_RUNTIME / FUNCTIONS_EXTENSION_VERSION app settings: the runtime is
// declared in functionAppConfig.runtime instead.

@description('Function app name (globally unique host name).')
param name string

@description('Plan name.')
param planName string

@description('Region.')
param location string

@description('Tags; azd-service-name is added here.')
param tags object = {}

@description('azd service name this resource implements.')
param serviceName string = 'api'

@description('Resource ID of the user-assigned identity the app runs as.')
param identityId string

@description('Blob endpoint of the storage account (trailing slash).')
param storageBlobEndpoint string

@description('Container that receives deployment packages.')
param deploymentContainerName string

@description('Node.js major version.')
@allowed([
  '22'
  '24'
])
param nodeVersion string = '24'

@description('Instance memory (MB). 4096 leaves room for the model and the inference worker threads.')
@allowed([
  512
  2048
  4096
])
param instanceMemoryMB int = 4096

@description('Maximum instances.')
@minValue(1)
@maxValue(1000)
param maximumInstanceCount int = 100

@description('Always-ready instances for the HTTP function group (0 = scale to zero; the first request then pays the model load).')
@minValue(0)
param alwaysReadyHttpInstances int = 1

@description('Concurrent HTTP requests per instance before Flex adds an instance.')
@minValue(1)
@maxValue(1000)
param httpPerInstanceConcurrency int = 50

@description('App settings as [{ name, value }].')
param appSettings array

@description('Application Insights connection string.')
@secure()
param appInsightsConnectionString string

resource plan 'Microsoft.Web/serverfarms@2024-04-01' = {
  name: planName
  location: location
  tags: tags
  kind: 'functionapp'
  sku: {
    name: 'FC1'
    tier: 'FlexConsumption'
  }
  properties: {
    reserved: true
  }
}

resource app 'Microsoft.Web/sites@2024-04-01' = {
  name: name
  location: location
  tags: union(tags, { 'azd-service-name': serviceName })
  kind: 'functionapp,linux'
  identity: {
    type: 'UserAssigned'
    userAssignedIdentities: {
      '${identityId}': {}
    }
  }
  properties: {
    serverFarmId: plan.id
    httpsOnly: true
    functionAppConfig: {
      deployment: {
        storage: {
          type: 'blobContainer'
          value: '${storageBlobEndpoint}${deploymentContainerName}'
          authentication: {
            type: 'UserAssignedIdentity'
            userAssignedIdentityResourceId: identityId
          }
        }
      }
      scaleAndConcurrency: {
        maximumInstanceCount: maximumInstanceCount
        instanceMemoryMB: instanceMemoryMB
        alwaysReady: alwaysReadyHttpInstances > 0
          ? [
              {
                name: 'http'
                instanceCount: alwaysReadyHttpInstances
              }
            ]
          : []
        triggers: {
          http: {
            perInstanceConcurrency: httpPerInstanceConcurrency
          }
        }
      }
      runtime: {
        name: 'node'
        version: nodeVersion
      }
    }
    siteConfig: {
      minTlsVersion: '1.2'
      appSettings: concat(appSettings, [
        {
          name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
          value: appInsightsConnectionString
        }
      ])
    }
  }
}

@description('App name.')
output name string = app.name

@description('Base URL of the app.')
output uri string = 'https://${app.properties.defaultHostName}'
