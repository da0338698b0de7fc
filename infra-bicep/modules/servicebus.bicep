// Service Bus namespace (Entra ID only) with the three entities the app names in its settings:
//   queue  `payments`          SCORING_QUEUE   scoring requests (trigger); maxDeliveryCount 10, then DLQ
//   topic  `risk-completed`    RESULTS_TOPIC   scored results; duplicate detection on (MessageId = transactionId),
//                                              window = the app's IDEMPOTENCY_TTL_SEC (6 h; README "Exactly once")
//   queue  `scoring-rejected`  REJECTED_QUEUE  events the pipeline refused (validation / model errors), and intake
//                                              messages that can never become a case
//   queue  `case-intake`       CASE_INTAKE_QUEUE  review cases on their way to PostgreSQL (caseIntake trigger);
//                                              duplicate detection on (MessageId = transactionId); maxDeliveryCount
//                                              200: with the app's backoff (1 s doubling to 20 s per delivery) it
//                                              rides out about an hour of PostgreSQL outage (docs/cases.md)
//   topic  `case-events`       CASE_EVENTS_TOPIC  the case events (review.opened, review.closed) for consumers inside the
//                                              platform, the same as the merchants' webhooks (docs/webhooks.md);
//                                              duplicate detection on (MessageId = the event's webhook-id)
// plus one subscription on the results topic for the downstream consumer.

@description('Namespace name (6-50 chars).')
@minLength(6)
@maxLength(50)
param name string

@description('Region.')
param location string

@description('Tags.')
param tags object = {}

@description('Standard is the smallest tier with topics; Premium adds isolation and VNet support.')
@allowed([
  'Standard'
  'Premium'
])
param skuName string = 'Standard'

@description('Scoring queue (SCORING_QUEUE).')
param scoringQueueName string = 'payments'

@description('Results topic (RESULTS_TOPIC).')
param resultsTopicName string = 'risk-completed'

@description('Subscription on the results topic.')
param resultsSubscriptionName string = 'risk-consumers'

@description('Case events topic (CASE_EVENTS_TOPIC).')
param caseEventsTopicName string = 'case-events'

@description('Rejected-events queue (REJECTED_QUEUE).')
param rejectedQueueName string = 'scoring-rejected'

@description('Case intake queue (CASE_INTAKE_QUEUE).')
param caseIntakeQueueName string = 'case-intake'

@description('Deliveries of a case intake batch before it is dead-lettered; each failed delivery waits up to 20 s in the app first.')
@minValue(10)
@maxValue(2000)
param caseIntakeMaxDeliveryCount int = 200

@description('Duplicate-detection window of the results topic, s: at least the app\'s IDEMPOTENCY_TTL_SEC, so a result re-published on a late redelivery is dropped (Service Bus allows 20 s to 7 days).')
@minValue(60)
@maxValue(604800)
param duplicateDetectionWindowSec int = 21600

@description('Principal ID of the app identity.')
param appPrincipalId string

var roleIds = {
  dataReceiver: '4f6d3b9b-027b-4f4c-9142-0e5a2a2247e0'
  dataSender: '69a216fc-b8fb-44d8-bc22-1f3c2cd27a39'
  dataOwner: '090c5cfd-751d-490a-894a-3ce6f1109419'
}

resource namespace 'Microsoft.ServiceBus/namespaces@2024-01-01' = {
  name: name
  location: location
  tags: tags
  sku: {
    name: skuName
    tier: skuName
    capacity: skuName == 'Premium' ? 1 : null
  }
  properties: {
    disableLocalAuth: true
    minimumTlsVersion: '1.2'
    publicNetworkAccess: 'Enabled'
  }
}

resource scoringQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: scoringQueueName
  properties: {
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    defaultMessageTimeToLive: 'P1D'
    deadLetteringOnMessageExpiration: true
    // Idempotency is handled by the app (event id); no broker-side duplicate detection on the input.
    requiresDuplicateDetection: false
    requiresSession: false
    enableBatchedOperations: true
    maxSizeInMegabytes: 1024
  }
}

resource rejectedQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: rejectedQueueName
  properties: {
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    defaultMessageTimeToLive: 'P14D'
    deadLetteringOnMessageExpiration: true
    requiresDuplicateDetection: false
    requiresSession: false
    enableBatchedOperations: true
    maxSizeInMegabytes: 1024
  }
}

// Review cases handed off by the scorer, written to PostgreSQL by the caseIntake function. The app waits (backoff by
// delivery count, at most 20 s, under the lock) before giving a batch back while PostgreSQL is down.
// requiresDuplicateDetection cannot be changed after the queue exists.
resource caseIntakeQueue 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  parent: namespace
  name: caseIntakeQueueName
  properties: {
    maxDeliveryCount: caseIntakeMaxDeliveryCount
    lockDuration: 'PT1M'
    defaultMessageTimeToLive: 'P14D'
    deadLetteringOnMessageExpiration: true
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'PT1H'
    requiresSession: false
    enableBatchedOperations: true
    maxSizeInMegabytes: 1024
  }
}

// requiresDuplicateDetection cannot be changed after the topic exists.
resource resultsTopic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: resultsTopicName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'PT${duplicateDetectionWindowSec}S'
    defaultMessageTimeToLive: 'P7D'
    enableBatchedOperations: true
    maxSizeInMegabytes: 1024
  }
}

// The case events: the webhook relay publishes each event at least once, with the same message id; a repeat within
// a day is dropped. requiresDuplicateDetection cannot be changed after the topic exists.
resource caseEventsTopic 'Microsoft.ServiceBus/namespaces/topics@2024-01-01' = {
  parent: namespace
  name: caseEventsTopicName
  properties: {
    requiresDuplicateDetection: true
    duplicateDetectionHistoryTimeWindow: 'P1D'
    defaultMessageTimeToLive: 'P7D'
    enableBatchedOperations: true
    maxSizeInMegabytes: 1024
  }
}

resource resultsSubscription 'Microsoft.ServiceBus/namespaces/topics/subscriptions@2024-01-01' = {
  parent: resultsTopic
  name: resultsSubscriptionName
  properties: {
    maxDeliveryCount: 10
    lockDuration: 'PT1M'
    defaultMessageTimeToLive: 'P7D'
    deadLetteringOnMessageExpiration: true
    deadLetteringOnFilterEvaluationExceptions: true
    enableBatchedOperations: true
  }
}

// Receive `payments` and `case-intake`, send to `risk-completed`, `case-events`, `scoring-rejected` and `case-intake`.
resource appReceiver 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(namespace.id, appPrincipalId, roleIds.dataReceiver)
  scope: namespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.dataReceiver)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

resource appSender 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(namespace.id, appPrincipalId, roleIds.dataSender)
  scope: namespace
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.dataSender)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

// The KEDA azure-servicebus scaler reads queue runtime properties (active message count), which needs
// the Manage claim. Granted on the scoring queue only, not on the namespace.
resource appScalerOwner 'Microsoft.Authorization/roleAssignments@2022-04-01' = {
  name: guid(scoringQueue.id, appPrincipalId, roleIds.dataOwner)
  scope: scoringQueue
  properties: {
    roleDefinitionId: subscriptionResourceId('Microsoft.Authorization/roleDefinitions', roleIds.dataOwner)
    principalId: appPrincipalId
    principalType: 'ServicePrincipal'
  }
}

@description('Namespace name (the KEDA scaler\'s `namespace` metadata).')
output name string = namespace.name

@description('Fully qualified namespace, e.g. sb-xyz.servicebus.windows.net (ServiceBusConnection__fullyQualifiedNamespace).')
output fullyQualifiedNamespace string = split(split(namespace.properties.serviceBusEndpoint, '/')[2], ':')[0]

@description('Scoring queue name.')
output scoringQueueName string = scoringQueue.name

@description('Case intake queue name.')
output caseIntakeQueueName string = caseIntakeQueue.name

@description('Results topic name.')
output resultsTopicName string = resultsTopic.name

@description('Case events topic name (CASE_EVENTS_TOPIC).')
output caseEventsTopicName string = caseEventsTopic.name

@description('Case intake queue (CASE_INTAKE_QUEUE).')
param caseIntakeQueueName string = 'case-intake'

@description('Deliveries of a case intake batch before it is dead-lettered; each failed delivery waits up to 20 s in the app first.')
@minValue(10)
@maxValue(2000)
param caseIntakeMaxDeliveryCount int = 200

@description('Duplicate-detection window of the results topic, s (the app\'s RESULTS_DUPLICATE_WINDOW_SEC).')
output duplicateDetectionWindowSec int = duplicateDetectionWindowSec

@description('Results topic subscription name.')
output resultsSubscriptionName string = resultsSubscription.name

@description('Rejected queue name.')
output rejectedQueueName string = rejectedQueue.name
