// The function app as a native "Azure Functions on Azure Container Apps" app:
// Microsoft.App/containerApps with kind 'functionapp' (the Functions host runs in our image; Container
// Apps provides ingress, revisions, KEDA scaling and, on the GPU plan, a serverless GPU per replica).
//
// Scaling is the platform's, never the app's:
//   scaleRuleMode 'custom'   (default) our KEDA rules replace the trigger-derived ones:
//                            azure-servicebus on the scoring queue's active message count, and HTTP
//                            concurrent requests per replica. Needs API 2026-03-02-preview
//                            (`allowScalingRuleOverride`).
//   scaleRuleMode 'platform' Container Apps derives KEDA rules from the registered triggers
//                            (Service Bus messageCount = host.json serviceBus.maxConcurrentCalls; HTTP
//                            via the built-in HTTP scaler). User rules are not allowed in this mode.
// Both: minReplicas (default 1 keeps one warm replica, the model loaded) and maxReplicas bound it.

@description('App name (2-32 lower-case letters, digits and dashes).')
@minLength(2)
@maxLength(32)
param name string

@description('Region.')
param location string

@description('Tags; azd-service-name is added here.')
param tags object = {}

@description('azd service name this resource implements (azure.yaml services.<name>).')
param serviceName string = 'api'

@description('Container Apps environment resource ID.')
param environmentId string

@description('Environment default domain (for the output URL).')
param environmentDefaultDomain string

@description('Workload profile: Consumption (CPU plan) or the GPU profile name.')
param workloadProfileName string = 'Consumption'

@description('Resource ID of the user-assigned identity the app runs as.')
param identityId string

@description('ACR login server the image is pulled from with the identity. Empty = public images only.')
param registryServer string = ''

@description('Full image reference. Empty = a public Functions base image as a placeholder until `azd deploy` pushes the real one.')
param imageName string = ''

@description('vCPUs per replica, as a string (json() is applied). T4: 8.0, A100: 24.0, Consumption: up to 4.0.')
param cpu string = '2.0'

@description('Memory per replica. T4: 56Gi, A100: 220Gi, Consumption: 2 GiB per vCPU.')
param memory string = '4Gi'

@description('Minimum replicas (1 keeps a warm replica with the model loaded; 0 allows scale to zero).')
@minValue(0)
@maxValue(1000)
param minReplicas int = 1

@description('Maximum replicas (bounded by GPU quota on the GPU plan).')
@minValue(1)
@maxValue(1000)
param maxReplicas int = 10

@description('custom = our KEDA rules (Service Bus + HTTP); platform = rules derived from the triggers.')
@allowed([
  'custom'
  'platform'
])
param scaleRuleMode string = 'custom'

@description('Service Bus namespace name (KEDA scaler metadata).')
param serviceBusNamespaceName string

@description('Scoring queue the KEDA rule watches.')
param scoringQueueName string

@description('Target active messages per replica for the Service Bus rule.')
@minValue(1)
param queueMessagesPerReplica int = 64

@description('Target concurrent HTTP requests per replica for the HTTP rule.')
@minValue(1)
param httpConcurrentRequestsPerReplica int = 50

@description('App settings as [{ name, value }] (become container environment variables).')
param appSettings array

@description('Application Insights connection string (stored as a Container Apps secret).')
@secure()
param appInsightsConnectionString string

var placeholderImage = 'mcr.microsoft.com/azure-functions/node:4-node24'
var usePlaceholder = empty(imageName)

// Probes only for the real image: the placeholder has no functions, so readiness would never pass. On the
// first `azd up` the postdeploy hook provisions again once the image exists (output probesEnabled).
// Container Apps caps failureThreshold at 10 and initialDelaySeconds at 60.
var probes = usePlaceholder
  ? []
  : [
      {
        type: 'Startup'
        httpGet: {
          path: '/api/health/live'
          port: 80
        }
        initialDelaySeconds: 10
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 10
      }
      {
        type: 'Liveness'
        httpGet: {
          path: '/api/health/live'
          port: 80
        }
        periodSeconds: 30
        timeoutSeconds: 5
        failureThreshold: 3
      }
      {
        // 503 until the model is loaded and a sample inference passed: no traffic before that.
        type: 'Readiness'
        httpGet: {
          path: '/api/health/ready'
          port: 80
        }
        periodSeconds: 10
        timeoutSeconds: 5
        failureThreshold: 3
      }
    ]

var container = {
  name: 'api'
  image: usePlaceholder ? placeholderImage : imageName
  env: concat(appSettings, [
    {
      name: 'APPLICATIONINSIGHTS_CONNECTION_STRING'
      secretRef: 'appinsights-connection-string'
    }
  ])
  resources: {
    cpu: json(cpu)
    memory: memory
  }
  probes: probes
}

var baseConfiguration = {
  activeRevisionsMode: 'Single'
  maxInactiveRevisions: 5
  ingress: {
    external: true
    targetPort: 80
    transport: 'auto'
    allowInsecure: false
    traffic: [
      {
        latestRevision: true
        weight: 100
      }
    ]
  }
  registries: empty(registryServer)
    ? []
    : [
        {
          server: registryServer
          identity: identityId
        }
      ]
}

var customScaleRules = [
  {
    name: 'servicebus-${scoringQueueName}'
    custom: {
      type: 'azure-servicebus'
      metadata: {
        namespace: serviceBusNamespaceName
        queueName: scoringQueueName
        messageCount: string(queueMessagesPerReplica)
      }
      // KEDA authenticates to Service Bus as the app identity (Data Owner on the queue, see servicebus.bicep).
      identity: identityId
    }
  }
  {
    name: 'http-concurrency'
    http: {
      metadata: {
        concurrentRequests: string(httpConcurrentRequestsPerReplica)
      }
    }
  }
]

var appIdentity = {
  type: 'UserAssigned'
  userAssignedIdentities: {
    '${identityId}': {}
  }
}

var appTags = union(tags, { 'azd-service-name': serviceName })

#disable-next-line use-recent-api-versions
resource appCustomScale 'Microsoft.App/containerApps@2026-03-02-preview' = if (scaleRuleMode == 'custom') {
  name: name
  location: location
  tags: appTags
  kind: 'functionapp'
  identity: appIdentity
  properties: {
    environmentId: environmentId
    workloadProfileName: workloadProfileName
    configuration: union(baseConfiguration, {
      secrets: [
        {
          name: 'appinsights-connection-string'
          value: appInsightsConnectionString
        }
      ]
    })
    template: {
      containers: [
        container
      ]
      scale: {
        minReplicas: minReplicas
        maxReplicas: maxReplicas
        cooldownPeriod: 300
        pollingInterval: 15
        allowScalingRuleOverride: true
        rules: customScaleRules
      }
    }
  }
}

#disable-next-line use-recent-api-versions
resource appPlatformScale 'Microsoft.App/containerApps@2025-10-02-preview' = if (scaleRuleMode == 'platform') {
  name: name
  location: location
  tags: appTags
  kind: 'functionapp'
  identity: appIdentity
  properties: {
    environmentId: environmentId
    workloadProfileName: workloadProfileName
    configuration: union(baseConfiguration, {
      secrets: [
        {
          name: 'appinsights-connection-string'
          value: appInsightsConnectionString
        }
      ]
    })
    template: {
      containers: [
        container
      ]
      scale: {
        minReplicas: minReplicas
        maxReplicas: maxReplicas
        cooldownPeriod: 300
        pollingInterval: 15
      }
    }
  }
}

@description('App name.')
output name string = name

@description('Public FQDN of the app.')
output fqdn string = '${name}.${environmentDefaultDomain}'

@description('Base URL of the app.')
output uri string = 'https://${name}.${environmentDefaultDomain}'

@description('Whether the health probes are set (false while the placeholder image runs).')
output probesEnabled bool = !usePlaceholder

@description('Image the app runs (placeholder until the first azd deploy).')
output image string = usePlaceholder ? placeholderImage : imageName
