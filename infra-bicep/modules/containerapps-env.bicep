// Container Apps environment (workload profiles type). It always has the serverless `Consumption`
// profile; with enableGpu it also gets a serverless GPU profile (NVIDIA T4 or A100, per replica,
// scale to zero). Add the GPU profile when the environment is created: switching an existing CPU
// environment to GPU is not supported everywhere, so use a separate azd environment for each plan.

@description('Environment name.')
param name string

@description('Region. Serverless GPUs are only offered in some regions (docs/deploy.md).')
param location string

@description('Tags.')
param tags object = {}

@description('Name of the Log Analytics workspace that receives container console and system logs.')
param logAnalyticsWorkspaceName string

@description('Add a serverless GPU workload profile.')
param enableGpu bool = false

@description('Serverless GPU profile type.')
@allowed([
  'Consumption-GPU-NC8as-T4'
  'Consumption-GPU-NC24-A100'
])
param gpuProfileType string = 'Consumption-GPU-NC8as-T4'

@description('Name given to the GPU workload profile (apps select it with workloadProfileName).')
param gpuProfileName string = 'gpu'

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' existing = {
  name: logAnalyticsWorkspaceName
}

var consumptionProfile = [
  {
    name: 'Consumption'
    workloadProfileType: 'Consumption'
  }
]

var gpuProfile = enableGpu
  ? [
      {
        name: gpuProfileName
        workloadProfileType: gpuProfileType
      }
    ]
  : []

resource managedEnvironment 'Microsoft.App/managedEnvironments@2025-01-01' = {
  name: name
  location: location
  tags: tags
  properties: {
    appLogsConfiguration: {
      destination: 'log-analytics'
      logAnalyticsConfiguration: {
        customerId: workspace.properties.customerId
        sharedKey: workspace.listKeys().primarySharedKey
      }
    }
    workloadProfiles: concat(consumptionProfile, gpuProfile)
    zoneRedundant: false
  }
}

@description('Environment resource ID.')
output id string = managedEnvironment.id

@description('Environment name.')
output name string = managedEnvironment.name

@description('Default domain; an app with external ingress is at https://<app>.<defaultDomain>.')
output defaultDomain string = managedEnvironment.properties.defaultDomain

@description('Workload profile the function app should use.')
output appWorkloadProfileName string = enableGpu ? gpuProfileName : 'Consumption'
