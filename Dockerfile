# syntax=docker/dockerfile:1
#
# CPU image: Azure Functions (Node v4 programming model) + onnxruntime-node's CPU provider.
# Runs on Container Apps (Consumption profile) or anywhere the Functions host image runs.
#
#   docker build -t scoring:cpu .
#   docker run --rm -p 8080:80 -e AzureWebJobsStorage=<conn or identity settings> scoring:cpu
#
# onnxruntime-node's install script is skipped (package.json allowScripts, and ONNXRUNTIME_NODE_INSTALL=skip below
# for an npm that does not read allowScripts): the CPU provider ships inside the npm package, so the build never
# downloads the CUDA binaries.
#
# Node 24 by default; --build-arg NODE_MAJOR=22 builds on Node 22.

ARG NODE_MAJOR=24
# Build on Debian bookworm, the same distribution as the Functions base image, so native addons
# (lz4, compiled by node-gyp) match the runtime's glibc and Node ABI.
ARG BUILD_IMAGE=node:${NODE_MAJOR}-bookworm
ARG FUNCTIONS_IMAGE=mcr.microsoft.com/azure-functions/node:4-node${NODE_MAJOR}

# ---------------------------------------------------------------------------------------------
FROM ${BUILD_IMAGE} AS build
WORKDIR /src
ENV CI=true \
    npm_config_fund=false \
    npm_config_audit=false \
    npm_config_update_notifier=false \
    ONNXRUNTIME_NODE_INSTALL=skip

# Dependencies first, for layer caching.
COPY package.json package-lock.json ./
RUN npm ci

COPY . .
RUN npm run build

# A seed model so a fresh image is ready without any upload (models/fraud/1.0.0.*, deterministic).
# The committed model in the build context is used as it is (trained here only when it is missing); production
# versions come from the `models` blob container. --build-arg BUNDLE_SEED_MODEL=false ships no model at all: the
# models folder is emptied (test/infra/image-contents.test.ts runs this step both ways).
ARG BUNDLE_SEED_MODEL=true
RUN if [ "$BUNDLE_SEED_MODEL" = "true" ]; then \
      ls models/fraud/*.onnx >/dev/null 2>&1 || node dist/scripts/train-model.js --out models/fraud --version 1.0.0; \
    else \
      rm -rf models; \
    fi \
 && mkdir -p models

# Runtime dependencies only; drop compiled tests, benchmarks and the local dev host.
# Also drop onnxruntime-node's binaries for other platforms (~245 MB): the image is linux/amd64.
RUN npm prune --omit=dev \
 && rm -rf dist/test dist/bench dist/local \
 && find node_modules/onnxruntime-node/bin/napi-v6 -mindepth 2 -maxdepth 2 -type d ! -path '*/linux/x64' -exec rm -rf {} +

# ---------------------------------------------------------------------------------------------
FROM ${FUNCTIONS_IMAGE} AS runtime

# MALLOC_MMAP_THRESHOLD_: glibc mmaps every allocation from 128 KiB, so a retired model version's weights
# go back to the OS when its session is released (docs/rollout.md, Memory across swaps).
ENV AzureWebJobsScriptRoot=/home/site/wwwroot \
    AzureFunctionsJobHost__Logging__Console__IsEnabled=true \
    FUNCTIONS_WORKER_RUNTIME=node \
    ORT_EXECUTION_PROVIDERS=cpu \
    MALLOC_MMAP_THRESHOLD_=131072

WORKDIR /home/site/wwwroot
COPY --from=build /src/package.json /src/host.json ./
COPY --from=build /src/node_modules ./node_modules
COPY --from=build /src/dist ./dist
COPY --from=build /src/models ./models
# the shipped rulesets and signals versions, served when no pointer names another (lib/decisioning, lib/signals)
COPY --from=build /src/rulesets ./rulesets
COPY --from=build /src/signals ./signals

# The base image's CMD starts the Functions host on port 80.
EXPOSE 80
