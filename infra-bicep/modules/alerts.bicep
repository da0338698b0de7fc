// Alerts as code: log search alerts (scheduledQueryRules) on the Application Insights component the app's
// telemetry goes to (lib/telemetry). Each rule fires when its query returns a row. The queries are the ones
// the README's telemetry section shows; test/telemetry/alerts.test.ts keeps both in step.
//
// Sources: request and inference p95 from spans (the `requests` table holds SERVER spans, `dependencies`
// the INTERNAL `inference.run` spans; Application Insights keeps histogram metrics as sum/count/min/max
// only, so percentiles need the spans); the rest from the app's metrics (`customMetrics`).

@description('Application Insights component the app sends telemetry to.')
param applicationInsightsName string

@description('Region.')
param location string

@description('An existing action group (resource ID) to notify; empty = the one this module creates from alertEmail / alertWebhookUrl, if either is set.')
param actionGroupId string = ''

@description('E-mail receiver of the action group this module creates; empty = none.')
param alertEmail string = ''

@description('Webhook receiver (e.g. Teams or PagerDuty) of the action group this module creates; empty = none.')
@secure()
param alertWebhookUrl string = ''

@description('Tags for every resource.')
param tags object = {}

@description('Name prefix of the alert rules.')
param namePrefix string = 'scoring'

resource appInsights 'Microsoft.Insights/components@2020-02-02' existing = {
  name: applicationInsightsName
}

var createGroup = empty(actionGroupId) && (!empty(alertEmail) || !empty(alertWebhookUrl))

resource actionGroup 'Microsoft.Insights/actionGroups@2023-01-01' = if (createGroup) {
  name: '${namePrefix}-alerts'
  location: 'global'
  tags: tags
  properties: {
    groupShortName: 'scoring'
    enabled: true
    emailReceivers: empty(alertEmail) ? [] : [
      {
        name: 'email'
        emailAddress: alertEmail
        useCommonAlertSchema: true
      }
    ]
    webhookReceivers: empty(alertWebhookUrl) ? [] : [
      {
        name: 'webhook'
        serviceUri: alertWebhookUrl
        useCommonAlertSchema: true
      }
    ]
  }
}

var notify = !empty(actionGroupId) ? [
  actionGroupId
] : createGroup ? [
  actionGroup.id
] : []

var rules = [
  {
    name: 'request-p95'
    description: 'POST /api/score p95 above 150 ms over 5 minutes (at least 20 requests).'
    severity: 2
    window: 'PT5M'
    query: '''
requests
| where name == "POST /api/score"
| summarize p95 = percentile(duration, 95), n = count()
| where n >= 20 and p95 > 150
'''
  }
  {
    name: 'inference-p95'
    description: 'Model inference (inference.run spans) p95 above 30 ms over 5 minutes.'
    severity: 2
    window: 'PT5M'
    query: '''
dependencies
| where name == "inference.run"
| summarize p95 = percentile(duration, 95), n = count() by version = tostring(customDimensions["model.version"])
| where n >= 20 and p95 > 30
'''
  }
  {
    name: 'cache-hit-ratio'
    description: 'Context cache hit ratio (L1 + L2 hits over lookups) below 90 % over 5 minutes.'
    severity: 3
    window: 'PT5M'
    query: '''
customMetrics
| where name in ("scoring.cache.hits", "scoring.cache.misses")
| extend tier = tostring(customDimensions["tier"])
| summarize hits = sumif(value, name == "scoring.cache.hits"), l2Misses = sumif(value, name == "scoring.cache.misses" and tier == "l2")
| extend lookups = hits + l2Misses
| where lookups >= 100 and hits / lookups < 0.9
'''
  }
  {
    name: 'breaker-open'
    description: 'The LLM escalation circuit breaker is open on an instance.'
    severity: 2
    window: 'PT5M'
    query: '''
customMetrics
| where name == "scoring.breaker.open"
| summarize open = max(value) by cloud_RoleInstance
| where open >= 1
'''
  }
  {
    name: 'model-version-split'
    description: 'Instances served different model versions for 10 minutes or more (a rollout that does not converge).'
    severity: 2
    window: 'PT15M'
    query: '''
customMetrics
| where name == "scoring.model.served"
| extend version = tostring(customDimensions["model.version"])
| summarize versions = dcount(version) by bin(timestamp, 1m)
| where versions > 1
| summarize splitMinutes = count()
| where splitMinutes >= 10
'''
  }
  {
    name: 'shed-rate'
    description: 'More than 1 % of scoring requests shed (queue full or deadline) over 5 minutes.'
    severity: 2
    window: 'PT5M'
    query: '''
customMetrics
| where name in ("scoring.shed", "scoring.request.duration")
| summarize shed = sumif(value, name == "scoring.shed"), requests = sumif(valueCount, name == "scoring.request.duration")
| where requests >= 100 and shed / requests > 0.01
'''
  }
  {
    name: 'case-oldest-open'
    description: 'The oldest review case not closed yet was decided more than 4 hours ago (analysts are not keeping up).'
    severity: 3
    window: 'PT15M'
    query: '''
customMetrics
| where name == "cases.oldest_open.age"
| summarize oldestSec = max(valueMax)
| where oldestSec > 14400
'''
  }
  {
    name: 'case-drops'
    description: 'Review cases were dropped before they reached the durable intake queue (queue unreachable, writer buffer full) in the last 5 minutes.'
    severity: 2
    window: 'PT5M'
    query: '''
customMetrics
| where name == "cases.dropped"
| summarize dropped = sum(valueSum) by reason = tostring(customDimensions["reason"])
| where dropped > 0
'''
  }
  {
    name: 'case-sla-breached'
    description: 'Review cases not closed yet are past their queue SLA (CASE_QUEUES_FILE slaHours from the decision).'
    severity: 3
    window: 'PT15M'
    query: '''
customMetrics
| where name == "cases.sla.breached"
| summarize breached = max(valueMax) by queue = tostring(customDimensions["queue"])
| where breached > 0
'''
  }
]

resource alerts 'Microsoft.Insights/scheduledQueryRules@2023-03-15-preview' = [
  for rule in rules: {
    name: '${namePrefix}-${rule.name}'
    location: location
    tags: tags
    properties: {
      displayName: '${namePrefix}: ${rule.name}'
      description: rule.description
      severity: rule.severity
      enabled: true
      scopes: [
        appInsights.id
      ]
      evaluationFrequency: 'PT5M'
      windowSize: rule.window
      criteria: {
        allOf: [
          {
            query: rule.query
            timeAggregation: 'Count'
            operator: 'GreaterThan'
            threshold: 0
            failingPeriods: {
              numberOfEvaluationPeriods: 1
              minFailingPeriodsToAlert: 1
            }
          }
        ]
      }
      autoMitigate: true
      actions: {
        actionGroups: notify
      }
    }
  }
]

@description('Names of the alert rules.')
output alertNames array = [for (rule, i) in rules: alerts[i].name]

@description('Action groups the alert rules notify (the one created here, or the given one; empty = none).')
output actionGroups array = notify
