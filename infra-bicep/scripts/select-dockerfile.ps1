# azd `prepackage` hook (Windows): see select-dockerfile.sh.
$ErrorActionPreference = 'Stop'
$plan = if ($env:PLAN) { $env:PLAN } else { 'cpu' }
switch ($plan) {
  'gpu' { $source = 'Dockerfile.gpu' }
  'cpu' { $source = 'Dockerfile' }
  default { throw "select-dockerfile: PLAN must be gpu or cpu, got '$plan'" }
}
$hosting = if ($env:CPU_HOSTING) { $env:CPU_HOSTING } else { 'containerapps' }
if ($plan -eq 'cpu' -and $hosting -eq 'flex') {
  throw 'select-dockerfile: CPU_HOSTING=flex is a code deployment; azd deploy targets Container Apps only (see docs/deploy.md).'
}
New-Item -ItemType Directory -Force -Path .azure | Out-Null
Copy-Item -Force $source .azure/Dockerfile.selected
Write-Host "select-dockerfile: PLAN=$plan -> $source"
