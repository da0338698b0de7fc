// Event Grid system topic on the storage account, and (once the blob-trigger function exists and its
// `blobs_extension` system key is known) the subscription that delivers BlobCreated events for the
// models container to the Functions blob extension webhook. That is what `source: 'EventGrid'` on a
// blob trigger needs; it also lets the trigger scale from events instead of container polling.
//
// The subscription cannot be created on the first provision: Event Grid validates the webhook when
// the subscription is created, so the function must already be deployed. Set BLOB_TRIGGER_FUNCTION_NAME
// and BLOBS_EXTENSION_KEY after the first deploy and provision again (see docs/deploy.md).

@description('Storage account the topic watches.')
param storageAccountName string

@description('System topic name.')
param systemTopicName string

@description('Region (must be the storage account region).')
param location string

@description('Tags.')
param tags object = {}

@description('Base URL of the function app, e.g. https://ca-api-xyz.<env-domain>. Empty = no subscription.')
param functionAppBaseUrl string = ''

@description('Name of the blob-trigger function (as registered with app.storageBlob). Empty = no subscription.')
param blobTriggerFunctionName string = ''

@description('The host\'s `blobs_extension` system key. Empty = no subscription.')
@secure()
param blobsExtensionKey string = ''

@description('Container whose new blobs are delivered.')
param containerName string = 'models'

@description('Only blobs whose name ends with this are delivered (the model file; its manifest is uploaded first).')
param subjectEndsWith string = '.onnx'

var createSubscription = !empty(functionAppBaseUrl) && !empty(blobTriggerFunctionName) && !empty(blobsExtensionKey)

resource account 'Microsoft.Storage/storageAccounts@2023-05-01' existing = {
  name: storageAccountName
}

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' = {
  name: systemTopicName
  location: location
  tags: tags
  properties: {
    source: account.id
    topicType: 'Microsoft.Storage.StorageAccounts'
  }
}

resource blobCreatedSubscription 'Microsoft.EventGrid/systemTopics/eventSubscriptions@2022-06-15' = if (createSubscription) {
  parent: topic
  name: 'models-blob-created'
  properties: {
    destination: {
      endpointType: 'WebHook'
      properties: {
        endpointUrl: '${functionAppBaseUrl}/runtime/webhooks/blobs?functionName=Host.Functions.${blobTriggerFunctionName}&code=${blobsExtensionKey}'
        maxEventsPerBatch: 1
        preferredBatchSizeInKilobytes: 64
      }
    }
    filter: {
      includedEventTypes: [
        'Microsoft.Storage.BlobCreated'
      ]
      subjectBeginsWith: '/blobServices/default/containers/${containerName}/blobs/'
      subjectEndsWith: subjectEndsWith
    }
    eventDeliverySchema: 'EventGridSchema'
    retryPolicy: {
      maxDeliveryAttempts: 30
      eventTimeToLiveInMinutes: 1440
    }
  }
}

@description('System topic name.')
output systemTopicName string = topic.name

@description('Whether the webhook subscription was created in this deployment.')
output subscriptionCreated bool = createSubscription
