// Event Grid system topic on the storage account. The subscription that delivers BlobCreated events of the
// models container to the Functions blob extension webhook (what `source: 'EventGrid'` on a blob trigger
// needs) is created by the azd postdeploy hook (scripts/postdeploy.sh|.ps1): Event Grid validates the
// webhook when the subscription is created, and the webhook's `blobs_extension` key exists only once the
// app runs, after the first deploy.

@description('Storage account the topic watches.')
param storageAccountName string

@description('System topic name.')
param systemTopicName string

@description('Region (must be the storage account region).')
param location string

@description('Tags.')
param tags object = {}

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

@description('System topic name.')
output systemTopicName string = topic.name
