// The learning loop in Azure (docs/learning-loop.md): the decision log's retention (a lifecycle rule on the
// storage account) and its two alerts (log search rules on the app's metrics): any dropped decision record, and
// drift (PSI above 0.2 on the score or a feature for 30 minutes). Checkable only in Azure: nothing here runs
// under `npm start` or in the tests.

@description('Storage account holding the decisions container.')
param storageAccountName string

@description('Container of the decision log and labels (DECISION_LOG_CONTAINER).')
param decisionsContainerName string = 'decisions'

@description('Days a decision record is kept (lifecycle rule: deleted this long after its hour blob was last written).')
@minValue(1)
param decisionRetentionDays int = 400

@description('Days a label is kept.')
@minValue(1)
param labelRetentionDays int = 730

@description('Application Insights component the app sends telemetry to.')
param applicationInsightsName string

@description('Region.')
param location string

@description('Action groups to notify (resource IDs).')
param actionGroups array = []

@description('Tags for every resource.')
param tags object = {}

@description('Name prefix of the alert rules.')
param namePrefix string = 'scoring'

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource retention 'Microsoft.Storage/storageAccounts/managementPolicies@2023-05-01' = {
  parent: account
  name: 'default'
  properties: {
    policy: {
      rules: [
        {
          name: 'decision-log-retention'
          enabled: true
          type: 'Lifecycle'
          definition: {
            filters: {
              blobTypes: ['appendBlob']
              prefixMatch: ['${decisionsContainerName}/decisions/']
            }
            actions: {
              baseBlob: { delete: { daysAfterModificationGreaterThan: decisionRetentionDays } }
              version: { delete: { daysAfterCreationGreaterThan: 1 } }
            }
          }
        }
        {
          name: 'label-retention'
          enabled: true
          type: 'Lifecycle'
          definition: {
            filters: {
              blobTypes: ['blockBlob']
              prefixMatch: ['${decisionsContainerName}/labels/']
            }
            actions: {
              baseBlob: { delete: { daysAfterModificationGreaterThan: labelRetentionDays } }
              version: { delete: { daysAfterCreationGreaterThan: 1 } }
            }
          }
        }
      ]
    }
  }
}

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

var rules = [
  {
    name: 'decision-log-drops'
    description: 'Decision records were dropped (queue full, storage failure or no hash key) in the last 5 minutes.'
    severity: 2
    window: 'PT5M'
    query: '''
customMetrics
| where name == "learning.decisions.dropped"
| summarize dropped = sum(valueSum) by reason = tostring(customDimensions["reason"])
| where dropped > 0
'''
  }
  {
    name: 'drift-psi'
    description: 'PSI of the score or a feature above 0.2 for 30 minutes on a model version (live inputs no longer look like the training data).'
    severity: 3
    window: 'PT30M'
    query: '''
customMetrics
| where name == "learning.drift.psi"
| extend series = tostring(customDimensions["series"]), version = tostring(customDimensions["model.version"])
| summarize lowest = min(valueMin), n = count() by series, version, cloud_RoleInstance
| where n >= 3 and lowest > 0.2
'''
  }
]

resource alerts 'Microsoft.Insights/scheduledQueryRules@2023-03-15-preview' = [
  for rule in rules: {
    name: '${namePrefix}-${rule.name}'
    location: location
    tags: tags
    properties: {
      displayName: '${namePrefix}-${rule.name}'
      description: rule.description
      severity: rule.severity
      enabled: true
      scopes: [appInsights.id]
      evaluationFrequency: 'PT5M'
      windowSize: rule.window
      criteria: {
        allOf: [
          {
            query: rule.query
            timeAggregation: 'Count'
            operator: 'GreaterThan'
            threshold: 0
            failingPeriods: { numberOfEvaluationPeriods: 1, minFailingPeriodsToAlert: 1 }
          }
        ]
      }
      actions: { actionGroups: actionGroups }
    }
  }
]

@description('Names of the alert rules.')
output alertNames array = [for (rule, i) in rules: alerts[i].name]
