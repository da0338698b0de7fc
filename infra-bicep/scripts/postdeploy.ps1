# azd `postdeploy` hook (Windows / pwsh): see postdeploy.sh. Verified only in Azure.
$ErrorActionPreference = 'Stop'

$fn = if ($env:BLOB_TRIGGER_FUNCTION_NAME) { $env:BLOB_TRIGGER_FUNCTION_NAME } else { 'modelBlob' }
$rg = $env:AZURE_RESOURCE_GROUP; if (-not $rg) { throw 'AZURE_RESOURCE_GROUP is not set (run through azd)' }
$app = $env:SERVICE_API_NAME; if (-not $app) { throw 'SERVICE_API_NAME is not set (run through azd)' }
$hosting = if ($env:HOSTING) { $env:HOSTING } else { 'containerapps' }
$topic = $env:AZURE_EVENTGRID_SYSTEM_TOPIC_NAME; if (-not $topic) { throw 'AZURE_EVENTGRID_SYSTEM_TOPIC_NAME is not set' }
$container = if ($env:MODELS_CONTAINER) { $env:MODELS_CONTAINER } else { 'models' }
$rfn = if ($env:RULESET_TRIGGER_FUNCTION_NAME) { $env:RULESET_TRIGGER_FUNCTION_NAME } else { 'rulesetBlob' }
$rcontainer = if ($env:RULESETS_CONTAINER) { $env:RULESETS_CONTAINER } else { $container }
$sfn = if ($env:SIGNALS_TRIGGER_FUNCTION_NAME) { $env:SIGNALS_TRIGGER_FUNCTION_NAME } else { 'signalsBlob' }
$scontainer = if ($env:SIGNALS_CONTAINER) { $env:SIGNALS_CONTAINER } else { $container }
$attempts = if ($env:POSTDEPLOY_KEY_ATTEMPTS) { [int]$env:POSTDEPLOY_KEY_ATTEMPTS } else { 30 }

# The decision log's hash key (DECISION_LOG_HASH_KEY_SECRET_NAME): created once, never rotated by a deployment.
$vault = $env:KEY_VAULT_NAME
if ($vault) {
  az keyvault secret show --vault-name $vault --name decision-log-hash-key --output none 2>$null
  if ($LASTEXITCODE -ne 0) {
    $bytes = New-Object byte[] 48
    [System.Security.Cryptography.RandomNumberGenerator]::Create().GetBytes($bytes)
    az keyvault secret set --vault-name $vault --name decision-log-hash-key --value ([Convert]::ToBase64String($bytes)) --output none
    Write-Host "postdeploy: created the decision-log-hash-key secret (restart the app so it reads it)"
  }
}

if ($hosting -eq 'containerapps' -and $env:PROBES_ENABLED -eq 'false') {
  $image = (azd env get-value SERVICE_API_IMAGE_NAME 2>$null)
  if ($image) {
    Write-Host 'postdeploy: first deployment ran the placeholder; provisioning again with the image and health probes'
    azd provision --no-prompt
    if ($LASTEXITCODE -ne 0) { throw 'postdeploy: azd provision failed' }
  }
}

$baseUrl = $env:SERVICE_API_URI; if (-not $baseUrl) { throw 'SERVICE_API_URI is not set' }
$key = ''
for ($i = 1; $i -le $attempts; $i++) {
  if ($hosting -eq 'flex') {
    $key = (az functionapp keys list -g $rg -n $app --query systemKeys.blobs_extension -o tsv 2>$null)
  } else {
    $key = (az containerapp function keys show -g $rg -n $app --key-type systemKey --key-name blobs_extension --query value -o tsv 2>$null)
  }
  if ($key) { break }
  Write-Host "postdeploy: waiting for the blobs_extension key ($i/$attempts)"
  Start-Sleep -Seconds 10
}
if (-not $key) { throw "postdeploy: no blobs_extension key after $attempts attempts: is $fn registered with source 'EventGrid' and the app running? (docs/deploy.md)" }

# Subscribe NAME FUNCTION SUBJECT_PREFIX SUBJECT_SUFFIX
function Subscribe([string]$name, [string]$function, [string]$prefix, [string]$suffix) {
  az eventgrid system-topic event-subscription create `
    -g $rg --system-topic-name $topic -n $name `
    --endpoint-type webhook `
    --endpoint "$baseUrl/runtime/webhooks/blobs?functionName=Host.Functions.$function&code=$key" `
    --included-event-types Microsoft.Storage.BlobCreated `
    --subject-begins-with $prefix `
    --subject-ends-with $suffix `
    --max-events-per-batch 1 --preferred-batch-size-in-kilobytes 64 `
    --max-delivery-attempts 30 --event-ttl 1440 `
    --output none
  if ($LASTEXITCODE -ne 0) { throw "postdeploy: creating the Event Grid subscription $name failed" }
  Write-Host "postdeploy: Event Grid subscription $name -> $function ($prefix*$suffix)"
}

Subscribe 'models-blob-created' $fn "/blobServices/default/containers/$container/blobs/" '.onnx'
Subscribe 'rulesets-blob-created' $rfn "/blobServices/default/containers/$rcontainer/blobs/rulesets/" '.json'
Subscribe 'signals-blob-created' $sfn "/blobServices/default/containers/$scontainer/blobs/features/" '.json'
