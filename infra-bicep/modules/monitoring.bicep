// Log Analytics workspace + workspace-based Application Insights.
// The Container Apps environment ships console logs to the workspace; the Functions host and the app's
// own telemetry (lib/telemetry) go to Application Insights through APPLICATIONINSIGHTS_CONNECTION_STRING.

@description('Log Analytics workspace name.')
param logAnalyticsName string

@description('Application Insights component name.')
param applicationInsightsName string

@description('Region.')
param location string

@description('Tags for every resource.')
param tags object = {}

@description('Log retention in days.')
@minValue(30)
@maxValue(730)
param retentionInDays int = 30

resource workspace 'Microsoft.OperationalInsights/workspaces@2023-09-01' = {
  name: logAnalyticsName
  location: location
  tags: tags
  properties: {
    sku: {
      name: 'PerGB2018'
    }
    retentionInDays: retentionInDays
    features: {
      enableLogAccessUsingOnlyResourcePermissions: true
    }
  }
}

// Local (connection-string) ingestion stays enabled: the app's telemetry SDK authenticates with the
// connection string only. Turning on DisableLocalAuth needs Entra ingestion in the app first.
resource appInsights 'Microsoft.Insights/components@2020-02-02' = {
  name: applicationInsightsName
  location: location
  tags: tags
  kind: 'web'
  properties: {
    Application_Type: 'web'
    WorkspaceResourceId: workspace.id
    IngestionMode: 'LogAnalytics'
    publicNetworkAccessForIngestion: 'Enabled'
    publicNetworkAccessForQuery: 'Enabled'
  }
}

@description('Resource ID of the Log Analytics workspace.')
output workspaceId string = workspace.id

@description('Name of the Log Analytics workspace.')
output workspaceName string = workspace.name

@description('Name of the Application Insights component.')
output applicationInsightsName string = appInsights.name

@description('Application Insights connection string.')
output applicationInsightsConnectionString string = appInsights.properties.ConnectionString
