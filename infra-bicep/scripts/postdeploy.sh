#!/bin/sh
# azd `postdeploy` hook: finishes a one-pass `azd up`.
#   1. Container Apps: if the last provision ran the placeholder image (PROBES_ENABLED=false, first
#      `azd up`), provision once more now that SERVICE_API_IMAGE_NAME is known, so the app gets the real
#      image in the template and its health probes.
#   2. Waits (bounded) for the host's `blobs_extension` system key, which the host creates when it loads a
#      blob trigger with source 'EventGrid'.
#   3. Creates (or updates) the Event Grid subscriptions (BlobCreated events -> the blob extension webhook):
#      `models-blob-created`: `*.onnx` in the models container -> BLOB_TRIGGER_FUNCTION_NAME;
#      `rulesets-blob-created`: `rulesets/**.json` in RULESETS_CONTAINER (default: the models container)
#      -> RULESET_TRIGGER_FUNCTION_NAME;
#      `signals-blob-created`: `features/**.json` in SIGNALS_CONTAINER (default: the models container)
#      -> SIGNALS_TRIGGER_FUNCTION_NAME.
# Needs az (logged in, `containerapp` extension) and azd. Idempotent. Verified only in Azure.
set -eu

fn="${BLOB_TRIGGER_FUNCTION_NAME:-modelBlob}"
rg="${AZURE_RESOURCE_GROUP:?AZURE_RESOURCE_GROUP is not set (run through azd)}"
app="${SERVICE_API_NAME:?SERVICE_API_NAME is not set (run through azd)}"
hosting="${HOSTING:-containerapps}"
topic="${AZURE_EVENTGRID_SYSTEM_TOPIC_NAME:?AZURE_EVENTGRID_SYSTEM_TOPIC_NAME is not set}"
container="${MODELS_CONTAINER:-models}"
rfn="${RULESET_TRIGGER_FUNCTION_NAME:-rulesetBlob}"
rcontainer="${RULESETS_CONTAINER:-$container}"
sfn="${SIGNALS_TRIGGER_FUNCTION_NAME:-signalsBlob}"
scontainer="${SIGNALS_CONTAINER:-$container}"
attempts="${POSTDEPLOY_KEY_ATTEMPTS:-30}"

# The decision log's hash key (DECISION_LOG_HASH_KEY_SECRET_NAME): created once, never rotated by a deployment
# (hashes must stay stable for joins and erasure). The app reads it at start; restart it if it was just created.
vault="${KEY_VAULT_NAME:-}"
if [ -n "$vault" ] && ! az keyvault secret show --vault-name "$vault" --name decision-log-hash-key >/dev/null 2>&1; then
  az keyvault secret set --vault-name "$vault" --name decision-log-hash-key \
    --value "$(openssl rand -base64 48)" --output none
  echo "postdeploy: created the decision-log-hash-key secret (restart the app so it reads it)"
fi

if [ "$hosting" = "containerapps" ] && [ "${PROBES_ENABLED:-true}" = "false" ]; then
  if [ -n "$(azd env get-value SERVICE_API_IMAGE_NAME 2>/dev/null || true)" ]; then
    echo "postdeploy: first deployment ran the placeholder; provisioning again with the image and health probes"
    azd provision --no-prompt
  fi
fi

base_url="${SERVICE_API_URI:?SERVICE_API_URI is not set}"
key=""
i=0
while [ "$i" -lt "$attempts" ]; do
  i=$((i + 1))
  if [ "$hosting" = "flex" ]; then
    key="$(az functionapp keys list -g "$rg" -n "$app" --query systemKeys.blobs_extension -o tsv 2>/dev/null || true)"
  else
    key="$(az containerapp function keys show -g "$rg" -n "$app" --key-type systemKey --key-name blobs_extension --query value -o tsv 2>/dev/null || true)"
  fi
  [ -n "$key" ] && break
  echo "postdeploy: waiting for the blobs_extension key ($i/$attempts)"
  sleep 10
done
if [ -z "$key" ]; then
  echo "postdeploy: no blobs_extension key after $attempts attempts: is $fn registered with source 'EventGrid' and the app running? (docs/deploy.md)" >&2
  exit 1
fi

# subscribe NAME FUNCTION SUBJECT_PREFIX SUBJECT_SUFFIX
subscribe() {
  az eventgrid system-topic event-subscription create \
    -g "$rg" --system-topic-name "$topic" -n "$1" \
    --endpoint-type webhook \
    --endpoint "${base_url}/runtime/webhooks/blobs?functionName=Host.Functions.$2&code=${key}" \
    --included-event-types Microsoft.Storage.BlobCreated \
    --subject-begins-with "$3" \
    --subject-ends-with "$4" \
    --max-events-per-batch 1 --preferred-batch-size-in-kilobytes 64 \
    --max-delivery-attempts 30 --event-ttl 1440 \
    --output none
  echo "postdeploy: Event Grid subscription $1 -> $2 ($3*$4)"
}

subscribe models-blob-created "$fn" "/blobServices/default/containers/${container}/blobs/" .onnx
subscribe rulesets-blob-created "$rfn" "/blobServices/default/containers/${rcontainer}/blobs/rulesets/" .json
subscribe signals-blob-created "$sfn" "/blobServices/default/containers/${scontainer}/blobs/features/" .json
