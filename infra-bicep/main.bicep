// ONNX fraud-scoring service: the whole Azure footprint, one resource group.
//
//   plan = 'gpu'  Functions on Azure Container Apps (kind functionapp), serverless GPU workload profile
//                 (NVIDIA T4 or A100 per replica), CUDA image (Dockerfile.gpu), KEDA rules on the
//                 Service Bus queue length and HTTP concurrency, min 1 replica.
//   plan = 'cpu'  cpuHosting 'containerapps' (default): same app on the Consumption workload profile,
//                 CPU image (Dockerfile), same KEDA rules.
//                 cpuHosting 'flex': code-deployed app on a Flex Consumption plan (FC1); Flex scales it.
//
// Shared by every plan: user-assigned identity, Log Analytics + Application Insights, Storage
// (host storage + `models` container + Event Grid system topic), Service Bus (payments /
// risk-completed / scoring-rejected), Azure Managed Redis (Entra auth; Azure Cache for Redis as an
// option), Key Vault (RBAC).
// No secrets are handed to the app: every connection is identity-based.
//
// Deploy with `azd up` (main.parameters.json maps azd env vars) or `az deployment group create`
// (see docs/deploy.md). The postdeploy hook (scripts/postdeploy.sh|.ps1) wires Event Grid to the
// blob trigger once the app runs.
//
// Keep this file regular: test/infra reads it without a Bicep compiler (app settings as { name, value }
// objects with literal names; `param`, `var`, `module` and `resource` declarations at the start of a line).

targetScope = 'resourceGroup'

// ---------------------------------------------------------------------------------------------
// Parameters
// ---------------------------------------------------------------------------------------------

@minLength(1)
@maxLength(64)
@description('Environment name (azd: AZURE_ENV_NAME). Seeds resource names and the azd-env-name tag.')
param environmentName string

@description('Region for every resource. For plan=gpu pick a region with serverless GPUs (docs/deploy.md).')
param location string = resourceGroup().location

@description('gpu = Container Apps + serverless GPU; cpu = CPU only (Container Apps or Flex, see cpuHosting).')
@allowed([
  'gpu'
  'cpu'
])
param plan string = 'cpu'

@description('Hosting for plan=cpu: containerapps (works with azd deploy) or flex (Flex Consumption, code deploy).')
@allowed([
  'containerapps'
  'flex'
])
param cpuHosting string = 'containerapps'

@description('Serverless GPU profile for plan=gpu.')
@allowed([
  'Consumption-GPU-NC8as-T4'
  'Consumption-GPU-NC24-A100'
])
param gpuProfileType string = 'Consumption-GPU-NC8as-T4'

@description('custom = KEDA rules on the scoring queue and HTTP concurrency (API 2026-03-02-preview); platform = rules derived from the triggers.')
@allowed([
  'custom'
  'platform'
])
param scaleRuleMode string = 'custom'

@description('Image to run (azd: SERVICE_API_IMAGE_NAME, set by azd deploy). Empty = placeholder until the first deploy.')
param apiImageName string = ''

@description('Minimum replicas (Container Apps). 1 keeps a warm replica with the model loaded.')
@minValue(0)
@maxValue(1000)
param minReplicas int = 1

@description('Maximum replicas (Container Apps). On GPU this is bounded by your serverless GPU quota.')
@minValue(1)
@maxValue(1000)
param maxReplicas int = 10

@description('KEDA target: active scoring-queue messages per replica.')
@minValue(1)
param queueMessagesPerReplica int = 64

@description('KEDA / Flex target: concurrent HTTP requests per replica. 0 = plan default (GPU 64, CPU 50): the micro-batcher needs concurrency to fill batches (the GPU batch cap is 48 at most). At most host.json extensions.http.maxConcurrentRequests (64): past it the Functions host queues requests, so the platform adds an instance before it does (docs/admission.md).')
@minValue(0)
@maxValue(64)
param httpConcurrentRequestsPerReplica int = 0

@description('vCPUs per replica on the Consumption profile (CPU plan); memory is 2 GiB per vCPU.')
@allowed([
  '0.5'
  '1.0'
  '2.0'
  '4.0'
])
param cpuReplicaCores string = '2.0'

@description('BATCH_MAX_SIZE_GPU (replaces BATCH_MAX_SIZE while CUDA is active). 0 = per GPU profile: T4 48, A100 32.')
@minValue(0)
@maxValue(4096)
param batchMaxSizeGpu int = 0

@description('INFERENCE_WORKERS on the GPU plan (CUDA sessions per replica, each with its own CUDA context). 0 = one per GPU (1 on T4 and A100 profiles).')
@minValue(0)
@maxValue(64)
param gpuInferenceWorkers int = 0

@description('IDEMPOTENCY_TTL_SEC: how long a transaction\'s result is kept for redelivery, s. Also the results topic\'s duplicate-detection window (at most 7 days).')
@minValue(60)
@maxValue(604800)
param idempotencyTtlSec int = 21600

@description('MODEL_DIR, relative to the app root (/home/site/wwwroot) or absolute.')
param modelDir string = 'models'

@description('MODEL_NAME.')
param modelName string = 'fraud'

@description('Object ID of the deploying user or CI principal (azd: AZURE_PRINCIPAL_ID). Gets model-upload, secrets and image-push rights. Empty = none.')
param principalId string = ''

@description('Type of principalId.')
@allowed([
  'User'
  'ServicePrincipal'
  'Group'
])
param principalType string = 'User'

@description('managed = Azure Managed Redis (redisEnterprise, TLS port 10000); classic = Azure Cache for Redis (retiring, TLS port 6380).')
@allowed([
  'managed'
  'classic'
])
param redisKind string = 'managed'

@description('Azure Managed Redis SKU (redisKind managed).')
@allowed([
  'Balanced_B0'
  'Balanced_B1'
  'Balanced_B3'
  'Balanced_B5'
  'MemoryOptimized_M10'
  'ComputeOptimized_X3'
])
param managedRedisSkuName string = 'Balanced_B1'

@description('Azure Managed Redis clustering policy (redisKind managed). NoCluster keeps single-server semantics (MULTI across keys, Lua).')
@allowed([
  'NoCluster'
  'EnterpriseCluster'
])
param managedRedisClusteringPolicy string = 'NoCluster'

@description('Azure Cache for Redis SKU (redisKind classic).')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param redisSkuName string = 'Standard'

@description('Azure Cache for Redis capacity (C0-C6 / P1-P5, redisKind classic).')
@minValue(0)
@maxValue(6)
param redisCapacity int = 1

@description('Key Vault purge protection (recommended in production; irreversible).')
param keyVaultPurgeProtection bool = false

@description('ACR SKU. Premium enables artifact streaming (faster GPU cold starts).')
@allowed([
  'Basic'
  'Standard'
  'Premium'
])
param registrySkuName string = 'Standard'

@description('Flex: Node.js major version (runtime.version). 24 by default, 22 kept as a choice; Node 20 reached end of life on 2026-04-30.')
@allowed([
  '22'
  '24'
])
param flexNodeVersion string = '24'

@description('Flex: instance memory (MB).')
@allowed([
  512
  2048
  4096
])
param flexInstanceMemoryMB int = 4096

@description('Flex: maximum instances.')
@minValue(1)
@maxValue(1000)
param flexMaximumInstanceCount int = 100

@description('Name of the blob-trigger function that reacts to new models (app.storageBlob in functions/model-blob.ts). The postdeploy hook subscribes it to the models container.')
param blobTriggerFunctionName string = 'modelBlob'

@description('LLM escalation: Azure OpenAI endpoint (https://<resource>.openai.azure.com). Empty = escalation off. The app identity needs the Cognitive Services OpenAI User role on that resource (granted outside this template).')
param openAiEndpoint string = ''

@description('LLM escalation: the chat deployment name (json_schema structured outputs). Empty = escalation off.')
param openAiDeployment string = ''

@description('Alerts: e-mail address of the action group. Empty = no e-mail receiver. Consumed by modules/alerts.bicep.')
param alertEmail string = ''

@description('Alerts: webhook URL of the action group (e.g. a Teams or PagerDuty endpoint). Empty = no webhook receiver. Consumed by modules/alerts.bicep.')
@secure()
param alertWebhookUrl string = ''

@description('Name of the subscription on the risk-completed topic.')
param resultsSubscriptionName string = 'risk-consumers'

@description('An existing action group (resource ID) the telemetry alerts notify; empty = one created from alertEmail / alertWebhookUrl (if either is set).')
param alertActionGroupId string = ''

@description('Extra tags for every resource.')
param tags object = {}

// ---------------------------------------------------------------------------------------------
// Names and derived settings
// ---------------------------------------------------------------------------------------------

var resourceToken = toLower(uniqueString(resourceGroup().id, environmentName, location))
var allTags = union(tags, { 'azd-env-name': environmentName })

var isGpu = plan == 'gpu'
var useContainerApps = isGpu || cpuHosting == 'containerapps'
var useFlex = !useContainerApps

var scoringQueueName = 'payments'
var resultsTopicName = 'risk-completed'
var rejectedQueueName = 'scoring-rejected'
var caseIntakeQueueName = 'case-intake'
var modelsContainerName = 'models'
var flexDeploymentContainerName = 'app-package-${resourceToken}'

// Serverless GPU replica sizes are fixed by the profile; the batch caps are the service's tuning
// for each card (override with batchMaxSizeGpu).
var gpuSizing = {
  'Consumption-GPU-NC8as-T4': {
    cpu: '8.0'
    memory: '56Gi'
    batchMaxSizeGpu: 48
    gpus: 1
  }
  'Consumption-GPU-NC24-A100': {
    cpu: '24.0'
    memory: '220Gi'
    batchMaxSizeGpu: 32
    gpus: 1
  }
}
var effectiveBatchMaxSizeGpu = batchMaxSizeGpu > 0 ? batchMaxSizeGpu : gpuSizing[gpuProfileType].batchMaxSizeGpu
var effectiveGpuInferenceWorkers = gpuInferenceWorkers > 0 ? gpuInferenceWorkers : gpuSizing[gpuProfileType].gpus
var effectiveHttpConcurrency = httpConcurrentRequestsPerReplica > 0 ? httpConcurrentRequestsPerReplica : (isGpu ? 64 : 50)
var replicaCpu = isGpu ? gpuSizing[gpuProfileType].cpu : cpuReplicaCores

// Language-worker processes per replica or instance (FUNCTIONS_WORKER_PROCESS_COUNT: the host hands invocations to
// them round-robin) and the inference threads of each: processes × inferenceWorkers × intraOpThreads never exceeds
// the vCPUs (checked by test/infra/settings-contract.test.ts). CPU: one process per vCPU (Microsoft's guidance for
// CPU-bound Node apps), each with one inference thread. GPU: one process, so one CUDA context per GPU.
var cpuProcessSizing = {
  '0.5': { vcpus: 1, processes: 1, inferenceWorkers: 1, intraOpThreads: 1 }
  '1.0': { vcpus: 1, processes: 1, inferenceWorkers: 1, intraOpThreads: 1 }
  '2.0': { vcpus: 2, processes: 2, inferenceWorkers: 1, intraOpThreads: 1 }
  '4.0': { vcpus: 4, processes: 4, inferenceWorkers: 1, intraOpThreads: 1 }
}
// Flex Consumption: 2 GiB per vCPU (512 MB instances get a fraction of one).
var flexProcessSizing = {
  '512': { vcpus: 1, processes: 1, inferenceWorkers: 1, intraOpThreads: 1 }
  '2048': { vcpus: 1, processes: 1, inferenceWorkers: 1, intraOpThreads: 1 }
  '4096': { vcpus: 2, processes: 2, inferenceWorkers: 1, intraOpThreads: 1 }
}
var gpuProcessSizing = {
  'Consumption-GPU-NC8as-T4': { vcpus: 8, processes: 1, inferenceWorkers: effectiveGpuInferenceWorkers, intraOpThreads: 1 }
  'Consumption-GPU-NC24-A100': { vcpus: 24, processes: 1, inferenceWorkers: effectiveGpuInferenceWorkers, intraOpThreads: 1 }
}
var processSizing = isGpu
  ? gpuProcessSizing[gpuProfileType]
  : (useFlex ? flexProcessSizing[string(flexInstanceMemoryMB)] : cpuProcessSizing[cpuReplicaCores])
// The Consumption profile needs 2 GiB per vCPU.
var consumptionMemory = {
  '0.5': '1Gi'
  '1.0': '2Gi'
  '2.0': '4Gi'
  '4.0': '8Gi'
}
var replicaMemory = isGpu ? gpuSizing[gpuProfileType].memory : consumptionMemory[cpuReplicaCores]

var names = {
  identity: 'id-api-${resourceToken}'
  logAnalytics: 'log-${resourceToken}'
  appInsights: 'appi-${resourceToken}'
  storage: 'st${resourceToken}'
  eventGridTopic: 'evgt-models-${resourceToken}'
  serviceBus: 'sb-${resourceToken}'
  redis: 'redis-${resourceToken}'
  postgres: 'psql-${resourceToken}'
  keyVault: 'kv-${resourceToken}'
  registry: 'cr${resourceToken}'
  containerAppsEnv: 'cae-${resourceToken}'
  containerApp: 'ca-api-${resourceToken}'
  flexPlan: 'plan-api-${resourceToken}'
  flexApp: 'func-api-${resourceToken}'
}

// ---------------------------------------------------------------------------------------------
// Shared resources
// ---------------------------------------------------------------------------------------------

module monitoring 'modules/monitoring.bicep' = {
  name: 'monitoring'
  params: {
    logAnalyticsName: names.logAnalytics
    applicationInsightsName: names.appInsights
    location: location
    tags: allTags
  }
}

module alerts 'modules/alerts.bicep' = {
  name: 'alerts'
  params: {
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    location: location
    actionGroupId: alertActionGroupId
    alertEmail: alertEmail
    alertWebhookUrl: alertWebhookUrl
    tags: allTags
  }
}

// The learning loop: decision-log retention (lifecycle rule) and its alerts (drops, drift). Azure-only.
module learning 'modules/learning.bicep' = {
  name: 'learning'
  params: {
    storageAccountName: storage.outputs.name
    decisionsContainerName: 'decisions'
    applicationInsightsName: monitoring.outputs.applicationInsightsName
    location: location
    actionGroups: alerts.outputs.actionGroups
    tags: allTags
  }
}

module identity 'modules/identity.bicep' = {
  name: 'identity'
  params: {
    name: names.identity
    location: location
    tags: allTags
  }
}

module storage 'modules/storage.bicep' = {
  name: 'storage'
  params: {
    name: names.storage
    location: location
    tags: allTags
    modelsContainerName: modelsContainerName
    extraContainerNames: useFlex ? [flexDeploymentContainerName] : []
    appPrincipalId: identity.outputs.principalId
    deployerPrincipalId: principalId
    deployerPrincipalType: principalType
  }
}

module serviceBus 'modules/servicebus.bicep' = {
  name: 'servicebus'
  params: {
    name: names.serviceBus
    location: location
    tags: allTags
    scoringQueueName: scoringQueueName
    resultsTopicName: resultsTopicName
    resultsSubscriptionName: resultsSubscriptionName
    rejectedQueueName: rejectedQueueName
    caseIntakeQueueName: caseIntakeQueueName
    duplicateDetectionWindowSec: idempotencyTtlSec
    appPrincipalId: identity.outputs.principalId
  }
}

module redis 'modules/redis.bicep' = {
  name: 'redis'
  params: {
    name: names.redis
    location: location
    tags: allTags
    kind: redisKind
    managedSkuName: managedRedisSkuName
    managedClusteringPolicy: managedRedisClusteringPolicy
    classicSkuName: redisSkuName
    classicCapacity: redisCapacity
    appPrincipalId: identity.outputs.principalId
  }
}

module postgres 'modules/postgres.bicep' = {
  name: 'postgres'
  params: {
    name: names.postgres
    location: location
    tags: allTags
    appIdentityName: identity.outputs.name
    appPrincipalId: identity.outputs.principalId
  }
}

module keyVault 'modules/keyvault.bicep' = {
  name: 'keyvault'
  params: {
    name: names.keyVault
    location: location
    tags: allTags
    appPrincipalId: identity.outputs.principalId
    deployerPrincipalId: principalId
    deployerPrincipalType: principalType
    enablePurgeProtection: keyVaultPurgeProtection
  }
}

// ---------------------------------------------------------------------------------------------
// App settings (identical names on every plan; the engine reads them through lib/config)
// ---------------------------------------------------------------------------------------------

var appSettings = [
  // Host storage, identity-based.
  {
    name: 'AzureWebJobsStorage__accountName'
    value: storage.outputs.name
  }
  {
    name: 'AzureWebJobsStorage__credential'
    value: 'managedidentity'
  }
  {
    name: 'AzureWebJobsStorage__clientId'
    value: identity.outputs.clientId
  }
  // Service Bus trigger and outputs (connection: 'ServiceBusConnection').
  {
    name: 'ServiceBusConnection__fullyQualifiedNamespace'
    value: serviceBus.outputs.fullyQualifiedNamespace
  }
  {
    name: 'ServiceBusConnection__credential'
    value: 'managedidentity'
  }
  {
    name: 'ServiceBusConnection__clientId'
    value: identity.outputs.clientId
  }
  // Model blobs (connection: 'ModelStorage'). A blob trigger also needs the queue service URI.
  {
    name: 'ModelStorage__blobServiceUri'
    value: storage.outputs.blobEndpoint
  }
  {
    name: 'ModelStorage__queueServiceUri'
    value: storage.outputs.queueEndpoint
  }
  {
    name: 'ModelStorage__credential'
    value: 'managedidentity'
  }
  {
    name: 'ModelStorage__clientId'
    value: identity.outputs.clientId
  }
  {
    name: 'MODELS_CONTAINER'
    value: modelsContainerName
  }
  {
    name: 'RULESETS_CONTAINER'
    value: modelsContainerName
  }
  {
    name: 'SIGNALS_CONTAINER'
    value: modelsContainerName
  }
  // Entities.
  {
    name: 'SCORING_QUEUE'
    value: serviceBus.outputs.scoringQueueName
  }
  {
    name: 'RESULTS_TOPIC'
    value: serviceBus.outputs.resultsTopicName
  }
  {
    name: 'REJECTED_QUEUE'
    value: serviceBus.outputs.rejectedQueueName
  }
  {
    name: 'CASE_INTAKE_QUEUE'
    value: serviceBus.outputs.caseIntakeQueueName
  }
  {
    name: 'CASE_EVENTS_TOPIC'
    value: serviceBus.outputs.caseEventsTopicName
  }
  // Exactly once: the app checks IDEMPOTENCY_TTL_SEC <= RESULTS_DUPLICATE_WINDOW_SEC at startup.
  {
    name: 'IDEMPOTENCY_TTL_SEC'
    value: string(idempotencyTtlSec)
  }
  {
    name: 'RESULTS_DUPLICATE_WINDOW_SEC'
    value: string(serviceBus.outputs.duplicateDetectionWindowSec)
  }
  // Redis with Entra ID: host:port over TLS (Managed Redis 10000, classic 6380), username = the identity's
  // object ID, token from AZURE_CLIENT_ID.
  {
    name: 'REDIS_HOST'
    value: redis.outputs.endpoint
  }
  {
    name: 'REDIS_ENTRA_OBJECT_ID'
    value: identity.outputs.principalId
  }
  {
    name: 'AZURE_CLIENT_ID'
    value: identity.outputs.clientId
  }
  {
    name: 'KEY_VAULT_URL'
    value: keyVault.outputs.uri
  }
  // The decision log (docs/learning-loop.md): blob container on the models' account, and the key of its keyed
  // hashes from Key Vault (create the secret once: infra-bicep/scripts/postdeploy.sh does if it is missing).
  {
    name: 'DECISION_LOG_CONTAINER'
    value: 'decisions'
  }
  {
    name: 'DECISION_LOG_HASH_KEY_SECRET_NAME'
    value: 'decision-log-hash-key'
  }
  // Review cases (docs/cases.md): PostgreSQL Flexible Server with Entra ID only; the app signs in as its identity
  // with a token (AZURE_CLIENT_ID) as the password. The case API stays off (IDENTITY_MODE=disabled, the default)
  // until Easy Auth is configured and IDENTITY_MODE=easyauth is set.
  {
    name: 'CASE_STORE'
    value: 'postgres'
  }
  // Rule changes (docs/governance.md): a ruleset uploaded to blob becomes a draft that a second lead approves in the
  // console before it can be promoted; set true for teams without the console.
  {
    name: 'RULESET_DIRECT_ROLLOUT'
    value: 'false'
  }
  // Model changes (docs/rollout.md): a model uploaded to blob is validated but not made active; a promote, canary or
  // shadow takes effect when a second lead asks for the same change (four-eyes); set true for direct rollout.
  {
    name: 'MODEL_DIRECT_ROLLOUT'
    value: 'false'
  }
  {
    name: 'PG_HOST'
    value: postgres.outputs.host
  }
  {
    name: 'PG_DATABASE'
    value: postgres.outputs.databaseName
  }
  {
    name: 'PG_USER'
    value: postgres.outputs.user
  }
  {
    name: 'PG_ENTRA_AUTH'
    value: 'true'
  }
  // LLM escalation (off while either is empty); Entra ID through AZURE_CLIENT_ID.
  {
    name: 'AZURE_OPENAI_ENDPOINT'
    value: openAiEndpoint
  }
  {
    name: 'AZURE_OPENAI_DEPLOYMENT'
    value: openAiDeployment
  }
  // Inference.
  {
    name: 'ORT_EXECUTION_PROVIDERS'
    value: isGpu ? 'cuda,cpu' : 'cpu'
  }
  // CPU cap; also used on a GPU replica whose CUDA provider failed to load (CPU fallback).
  {
    name: 'BATCH_MAX_SIZE'
    value: '64'
  }
  // Replaces BATCH_MAX_SIZE while CUDA is active.
  {
    name: 'BATCH_MAX_SIZE_GPU'
    value: string(effectiveBatchMaxSizeGpu)
  }
  // Per process (processSizing): GPU one CUDA session per GPU; CPU one inference thread per process, one process per
  // vCPU, so that processes × workers × intra-op threads never exceed the vCPUs.
  {
    name: 'FUNCTIONS_WORKER_PROCESS_COUNT'
    value: string(processSizing.processes)
  }
  {
    name: 'INFERENCE_WORKERS'
    value: string(processSizing.inferenceWorkers)
  }
  {
    name: 'ORT_INTRA_OP_THREADS'
    value: string(processSizing.intraOpThreads)
  }
  {
    name: 'MODEL_DIR'
    value: modelDir
  }
  {
    name: 'MODEL_NAME'
    value: modelName
  }
  // glibc: mmap allocations from 128 KiB, so a retired model version's weights return to the OS (Flex; the images set it too).
  {
    name: 'MALLOC_MMAP_THRESHOLD_'
    value: '131072'
  }
]

// ---------------------------------------------------------------------------------------------
// Hosting: Functions on Container Apps (gpu, or cpu + containerapps)
// ---------------------------------------------------------------------------------------------

module registry 'modules/registry.bicep' = if (useContainerApps) {
  name: 'registry'
  params: {
    name: names.registry
    location: location
    tags: allTags
    skuName: registrySkuName
    appPrincipalId: identity.outputs.principalId
    deployerPrincipalId: principalId
    deployerPrincipalType: principalType
  }
}

module containerAppsEnv 'modules/containerapps-env.bicep' = if (useContainerApps) {
  name: 'containerapps-env'
  params: {
    name: names.containerAppsEnv
    location: location
    tags: allTags
    logAnalyticsWorkspaceName: monitoring.outputs.workspaceName
    enableGpu: isGpu
    gpuProfileType: gpuProfileType
  }
}

module functionAppContainerApps 'modules/functionapp-containerapps.bicep' = if (useContainerApps) {
  name: 'functionapp-containerapps'
  params: {
    name: names.containerApp
    location: location
    tags: allTags
    environmentId: useContainerApps ? containerAppsEnv.outputs.id : ''
    environmentDefaultDomain: useContainerApps ? containerAppsEnv.outputs.defaultDomain : ''
    workloadProfileName: useContainerApps ? containerAppsEnv.outputs.appWorkloadProfileName : 'Consumption'
    identityId: identity.outputs.id
    registryServer: useContainerApps ? registry.outputs.loginServer : ''
    imageName: apiImageName
    cpu: replicaCpu
    memory: replicaMemory
    minReplicas: minReplicas
    maxReplicas: maxReplicas
    scaleRuleMode: scaleRuleMode
    serviceBusNamespaceName: serviceBus.outputs.name
    scoringQueueName: serviceBus.outputs.scoringQueueName
    queueMessagesPerReplica: queueMessagesPerReplica
    httpConcurrentRequestsPerReplica: effectiveHttpConcurrency
    appSettings: concat(
      [
        {
          name: 'FUNCTIONS_WORKER_RUNTIME'
          value: 'node'
        }
      ],
      appSettings
    )
    appInsightsConnectionString: monitoring.outputs.applicationInsightsConnectionString
  }
}

// ---------------------------------------------------------------------------------------------
// Hosting: Flex Consumption (cpu + flex)
// ---------------------------------------------------------------------------------------------

module functionAppFlex 'modules/functionapp-flex.bicep' = if (useFlex) {
  name: 'functionapp-flex'
  params: {
    name: names.flexApp
    planName: names.flexPlan
    location: location
    tags: allTags
    identityId: identity.outputs.id
    storageBlobEndpoint: storage.outputs.blobEndpoint
    deploymentContainerName: flexDeploymentContainerName
    nodeVersion: flexNodeVersion
    instanceMemoryMB: flexInstanceMemoryMB
    maximumInstanceCount: flexMaximumInstanceCount
    alwaysReadyHttpInstances: minReplicas
    httpPerInstanceConcurrency: effectiveHttpConcurrency
    appSettings: appSettings
    appInsightsConnectionString: monitoring.outputs.applicationInsightsConnectionString
  }
}

var apiUri = useContainerApps ? functionAppContainerApps.outputs.uri : functionAppFlex.outputs.uri
var apiName = useContainerApps ? functionAppContainerApps.outputs.name : functionAppFlex.outputs.name

// ---------------------------------------------------------------------------------------------
// Event Grid: system topic on the storage account. Its BlobCreated subscription to the blob-trigger
// webhook (source: 'EventGrid') needs the host's `blobs_extension` key, which exists only once the app
// runs: the azd postdeploy hook (scripts/postdeploy.sh|.ps1) creates it.
// ---------------------------------------------------------------------------------------------

module eventGrid 'modules/eventgrid.bicep' = {
  name: 'eventgrid'
  params: {
    storageAccountName: storage.outputs.name
    systemTopicName: names.eventGridTopic
    location: location
    tags: allTags
  }
}

// ---------------------------------------------------------------------------------------------
// Outputs (azd writes them into the environment's .env)
// ---------------------------------------------------------------------------------------------

@description('Region.')
output AZURE_LOCATION string = location
@description('Tenant of the deployment.')
output AZURE_TENANT_ID string = tenant().tenantId
@description('Resource group.')
output AZURE_RESOURCE_GROUP string = resourceGroup().name
@description('Plan deployed (gpu or cpu).')
output PLAN string = plan
@description('containerapps or flex.')
output HOSTING string = useContainerApps ? 'containerapps' : 'flex'

@description('ACR login server azd pushes the image to (Container Apps hosting only).')
output AZURE_CONTAINER_REGISTRY_ENDPOINT string = useContainerApps ? registry.outputs.loginServer : ''
@description('ACR name (Container Apps hosting only).')
output AZURE_CONTAINER_REGISTRY_NAME string = useContainerApps ? registry.outputs.name : ''
@description('Container Apps environment name (Container Apps hosting only).')
output AZURE_CONTAINER_APPS_ENVIRONMENT_NAME string = useContainerApps ? containerAppsEnv.outputs.name : ''
@description('Container Apps environment ID (Container Apps hosting only).')
output AZURE_CONTAINER_APPS_ENVIRONMENT_ID string = useContainerApps ? containerAppsEnv.outputs.id : ''

@description('Name of the resource that implements the api service.')
output SERVICE_API_NAME string = apiName
@description('Base URL of the api (routes under /api/...).')
output SERVICE_API_URI string = apiUri
@description('Base URL of the api (alias used by scripts).')
output SERVICE_API_ENDPOINT_URL string = apiUri

@description('Client ID of the app identity.')
output AZURE_CLIENT_ID string = identity.outputs.clientId
@description('Object ID of the app identity (also the Redis username).')
output AZURE_IDENTITY_PRINCIPAL_ID string = identity.outputs.principalId
@description('Storage account holding the models container.')
output AZURE_STORAGE_ACCOUNT_NAME string = storage.outputs.name
@description('Blob container for model artifacts.')
output MODELS_CONTAINER string = storage.outputs.modelsContainerName
@description('Event Grid system topic on the storage account.')
output AZURE_EVENTGRID_SYSTEM_TOPIC_NAME string = eventGrid.outputs.systemTopicName
@description('Service Bus namespace name.')
output SERVICE_BUS_NAMESPACE string = serviceBus.outputs.name
@description('Service Bus fully qualified namespace.')
output SERVICE_BUS_FQDN string = serviceBus.outputs.fullyQualifiedNamespace
@description('Scoring queue.')
output SCORING_QUEUE string = serviceBus.outputs.scoringQueueName
@description('Results topic.')
output RESULTS_TOPIC string = serviceBus.outputs.resultsTopicName
@description('Subscription on the results topic.')
output RESULTS_SUBSCRIPTION string = serviceBus.outputs.resultsSubscriptionName
@description('Rejected-events queue.')
output REJECTED_QUEUE string = serviceBus.outputs.rejectedQueueName
@description('Case intake queue.')
output CASE_INTAKE_QUEUE string = serviceBus.outputs.caseIntakeQueueName
@description('Case events topic (review.opened, review.closed).')
output CASE_EVENTS_TOPIC string = serviceBus.outputs.caseEventsTopicName
@description('Redis endpoint, host:port (TLS; Managed Redis 10000, classic 6380).')
output REDIS_HOST string = redis.outputs.endpoint
@description('Blob-trigger function the postdeploy hook subscribes to BlobCreated events.')
output BLOB_TRIGGER_FUNCTION_NAME string = blobTriggerFunctionName
@description('Whether the container app was rendered with the real image and its health probes (false = placeholder; the postdeploy hook provisions again).')
output PROBES_ENABLED bool = useContainerApps ? functionAppContainerApps.outputs.probesEnabled : true
@description('PostgreSQL server of the review cases.')
output PG_HOST string = postgres.outputs.host
@description('Key Vault URI.')
output KEY_VAULT_URL string = keyVault.outputs.uri
@description('Key Vault name.')
output KEY_VAULT_NAME string = keyVault.outputs.name
@description('Application Insights component name.')
output APPLICATIONINSIGHTS_NAME string = monitoring.outputs.applicationInsightsName
