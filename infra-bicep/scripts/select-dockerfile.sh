#!/bin/sh
# azd `prepackage` hook for the `api` service: azure.yaml's docker.path cannot be templated, so it
# points at .azure/Dockerfile.selected and this hook copies the Dockerfile that matches the azd
# environment's PLAN there (gpu -> Dockerfile.gpu, anything else -> Dockerfile).
# Runs from the service project directory (the repository root).
set -eu

plan="${PLAN:-cpu}"
case "$plan" in
  gpu) source_file="Dockerfile.gpu" ;;
  cpu) source_file="Dockerfile" ;;
  *) echo "select-dockerfile: PLAN must be gpu or cpu, got '$plan'" >&2; exit 1 ;;
esac

if [ "$plan" = "cpu" ] && [ "${CPU_HOSTING:-containerapps}" = "flex" ]; then
  echo "select-dockerfile: CPU_HOSTING=flex is a code deployment; azd deploy targets Container Apps only (see docs/deploy.md)." >&2
  exit 1
fi

mkdir -p .azure
cp "$source_file" .azure/Dockerfile.selected
echo "select-dockerfile: PLAN=$plan -> $source_file"
