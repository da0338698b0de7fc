/**
 * Infrastructure contract, bindings side: the binding metadata of the real registrations (connections,
 * %SETTING% references, entity and container names, routes) against the Bicep (identity-based settings,
 * role assignments, Service Bus entities, probes), the azd hook and host.json. Every failure names the
 * missing or mismatched item.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import type { SettingInfo } from '../../lib/config/env-schema';
import { evaluate, fileScope, moduleScope, property, readBicep, type BicepFile } from './support/bicep-reader';
import { stringLiteral } from './support/bicep-text';
import { find, loadFixture } from './support/contract-fixture';
import { ROLES, roleGrants } from './support/grants';
import {
  hostJson,
  INFRA,
  isoDurationSec,
  ROOT,
  settingReferences,
  type Binding,
  type PlanSettings,
} from './support/sources';

/** Identity-based connection settings and roles per binding type (Functions extension docs). */
const CONNECTION_RULES: Record<string, { endpoints: string[]; roles: string[] }> = {
  serviceBusTrigger: { endpoints: ['fullyQualifiedNamespace'], roles: [ROLES.serviceBusDataReceiver] },
  serviceBus: { endpoints: ['fullyQualifiedNamespace'], roles: [ROLES.serviceBusDataSender] },
  blobTrigger: {
    endpoints: ['blobServiceUri', 'queueServiceUri'],
    roles: [ROLES.storageBlobDataOwner, ROLES.storageQueueDataContributor],
  },
  blob: { endpoints: ['blobServiceUri'], roles: [ROLES.storageBlobDataOwner] },
  queueTrigger: { endpoints: ['queueServiceUri'], roles: [ROLES.storageQueueDataContributor] },
  queue: { endpoints: ['queueServiceUri'], roles: [ROLES.storageQueueDataContributor] },
};

let settings: readonly SettingInfo[];
let bindings: Binding[];
let main: BicepFile;
let plans: PlanSettings[];

before(async () => {
  ({ settings, bindings, main, plans } = await loadFixture());
});

describe('infra contract: bindings', () => {
  it('every binding %SETTING% is set in Bicep on every plan and has a default in the code', () => {
    const problems: string[] = [];
    for (const b of bindings) {
      for (const ref of settingReferences(b.binding)) {
        if (settings.find((s) => s.name === ref)?.defaultValue === undefined)
          problems.push(`${ref} (${b.functionName}) has no default in lib/config`);
        for (const p of plans)
          if (find(p, ref) === undefined) problems.push(`${ref} (${b.functionName}) missing on ${p.plan}`);
      }
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });

  it('every connection has its identity-based settings on every plan and the roles it needs', () => {
    const uses = bindings
      .filter((b) => typeof b.binding['connection'] === 'string')
      .map((b) => ({ conn: b.binding['connection'] as string, type: b.binding.type ?? '', where: b.functionName }));
    uses.push({ conn: 'AzureWebJobsStorage', type: 'host', where: 'host storage' });
    const problems: string[] = [];
    const scope = fileScope(main);
    for (const u of uses) {
      const rule =
        u.type === 'host'
          ? { endpoints: ['accountName'], roles: [ROLES.storageBlobDataOwner] }
          : CONNECTION_RULES[u.type];
      if (rule === undefined) {
        problems.push(`no identity rule for binding type ${u.type} (${u.where}); add one to CONNECTION_RULES`);
        continue;
      }
      for (const p of plans) {
        for (const suffix of [...rule.endpoints, 'credential', 'clientId']) {
          if (find(p, `${u.conn}__${suffix}`) === undefined) problems.push(`${u.conn}__${suffix} missing on ${p.plan}`);
        }
        const cred = find(p, `${u.conn}__credential`);
        if (cred !== undefined && evaluate(cred.value ?? '', scope) !== 'managedidentity') {
          problems.push(`${u.conn}__credential is not 'managedidentity' on ${p.plan}`);
        }
        const clientId = find(p, `${u.conn}__clientId`)?.value?.trim();
        if (clientId !== undefined && clientId !== 'identity.outputs.clientId') {
          problems.push(`${u.conn}__clientId is not the app identity on ${p.plan}`);
        }
      }
      const endpoint = plans[0] && find(plans[0], `${u.conn}__${rule.endpoints[0]}`)?.value;
      const owner = /^([A-Za-z_]\w*)\.outputs\./.exec(endpoint?.trim() ?? '')?.[1];
      const call = main.modules.find((m) => m.symbol === owner);
      if (call === undefined) {
        problems.push(`${u.conn}: its endpoint setting does not come from a module output`);
        continue;
      }
      const principal = property(property(call.body, 'params') ?? '{}', 'appPrincipalId')?.trim();
      if (principal !== 'identity.outputs.principalId')
        problems.push(`${call.target}: appPrincipalId is not the app identity`);
      const granted = roleGrants(readBicep(path.resolve(INFRA, call.target))).filter(
        (g) => g.principal === 'appPrincipalId',
      );
      for (const role of rule.roles) {
        if (!granted.some((g) => g.roleId === role))
          problems.push(`${call.target} does not grant role ${role} to the app (${u.conn}, ${u.type})`);
      }
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });

  it('Service Bus entities in Bicep match the binding names and the results topic; duplicate detection covers IDEMPOTENCY_TTL_SEC', () => {
    const scope = fileScope(main);
    const sb = moduleScope(scope, 'serviceBus');
    const entities = (kind: string): Map<string, string> =>
      new Map(
        sb.file.resources
          .filter((r) => r.target.startsWith(`Microsoft.ServiceBus/namespaces/${kind}@`))
          .map((r) => [String(evaluate(property(r.body, 'name') ?? '', sb)), r.body]),
      );
    const queues = entities('queues');
    const topics = entities('topics');
    const deployed = (setting: string): string | undefined => {
      const a = plans[0] === undefined ? undefined : find(plans[0], setting);
      const v = a?.value === undefined ? undefined : evaluate(a.value, scope);
      return typeof v === 'string' ? v : undefined;
    };
    const problems: string[] = [];
    const wanted: { setting: string; kind: 'queue' | 'topic'; where: string }[] = [];
    for (const b of bindings.filter((x) => /^serviceBus/.test(x.binding.type ?? ''))) {
      for (const [opt, kind] of [
        ['queueName', 'queue'],
        ['topicName', 'topic'],
      ] as const) {
        const v = b.binding[opt];
        const ref = typeof v === 'string' ? /^%(\w+)%$/.exec(v)?.[1] : undefined;
        if (typeof v === 'string' && ref === undefined)
          problems.push(`${b.functionName}.${opt} '${v}' is not a %SETTING%`);
        if (ref !== undefined) wanted.push({ setting: ref, kind, where: b.functionName });
      }
    }
    wanted.push({ setting: 'RESULTS_TOPIC', kind: 'topic', where: 'engine result publisher' });
    for (const w of wanted) {
      const name = deployed(w.setting);
      const code = settings.find((s) => s.name === w.setting)?.defaultValue;
      if (name === undefined) problems.push(`${w.setting} (${w.where}): no literal value in Bicep`);
      else if (!(w.kind === 'queue' ? queues : topics).has(name))
        problems.push(`${w.setting}='${name}' (${w.where}): no ${w.kind} '${name}' in servicebus.bicep`);
      if (name !== undefined && code !== name)
        problems.push(`${w.setting}: Bicep '${name}' differs from the code default '${String(code)}'`);
    }
    const results = topics.get(deployed('RESULTS_TOPIC') ?? '');
    const ttlSetting = deployed('IDEMPOTENCY_TTL_SEC');
    const ttl = Number(ttlSetting ?? settings.find((s) => s.name === 'IDEMPOTENCY_TTL_SEC')?.defaultValue);
    if (results !== undefined) {
      if (property(results, 'properties.requiresDuplicateDetection')?.trim() !== 'true')
        problems.push('results topic: requiresDuplicateDetection is not true');
      const window = evaluate(property(results, 'properties.duplicateDetectionHistoryTimeWindow') ?? '', sb);
      const sec = typeof window === 'string' ? isoDurationSec(window) : NaN;
      if (!(sec >= ttl))
        problems.push(
          `results topic duplicate-detection window ${String(window)} is shorter than IDEMPOTENCY_TTL_SEC=${ttl}`,
        );
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });

  it('the case intake queue: the caseIntake trigger reads it, duplicate detection on, a high maxDeliveryCount, a lock over the wait', () => {
    const scope = fileScope(main);
    const sb = moduleScope(scope, 'serviceBus');
    const trigger = bindings.find((b) => b.functionName === 'caseIntake' && b.binding.type === 'serviceBusTrigger');
    assert.ok(trigger, 'a caseIntake serviceBusTrigger registration');
    assert.equal(trigger.binding['queueName'], '%CASE_INTAKE_QUEUE%');
    assert.equal(trigger.binding['cardinality'], 'many');
    const name = plans[0] === undefined ? undefined : evaluate(find(plans[0], 'CASE_INTAKE_QUEUE')?.value ?? '', scope);
    const queue = sb.file.resources.find(
      (r) =>
        r.target.startsWith('Microsoft.ServiceBus/namespaces/queues@') &&
        evaluate(property(r.body, 'name') ?? '', sb) === name,
    );
    assert.ok(queue, `a queue '${String(name)}' in servicebus.bicep`);
    assert.equal(property(queue.body, 'properties.requiresDuplicateDetection')?.trim(), 'true');
    const deliveries = Number(evaluate(property(queue.body, 'properties.maxDeliveryCount') ?? '', sb));
    assert.ok(deliveries >= 100, `maxDeliveryCount ${deliveries} rides out a long outage (docs/cases.md)`);
    const lock = evaluate(property(queue.body, 'properties.lockDuration') ?? '', sb);
    assert.ok(
      typeof lock === 'string' && isoDurationSec(lock) > 20,
      `lockDuration ${String(lock)} exceeds the 20 s wait`,
    );
  });

  it('the blob container of the blob trigger is the one Bicep creates', () => {
    const scope = fileScope(main);
    const blob = bindings.find((b) => b.binding.type === 'blobTrigger');
    assert.ok(blob, 'a blobTrigger registration');
    const ref = /^%(\w+)%\//.exec(String(blob.binding['path']))?.[1];
    assert.equal(
      ref,
      'MODELS_CONTAINER',
      `blob trigger path ${String(blob.binding['path'])} starts with %MODELS_CONTAINER%/`,
    );
    for (const p of plans) {
      const v: string | undefined = find(p, 'MODELS_CONTAINER')?.value;
      assert.equal(
        v === undefined ? undefined : evaluate(v, scope),
        evaluate('storage.outputs.modelsContainerName', scope),
        `MODELS_CONTAINER on ${p.plan} is the container storage.bicep creates`,
      );
    }
  });

  it('the Event Grid hook subscribes the registered EventGrid blob trigger by default', () => {
    const fn = bindings.find((b) => b.binding.type === 'blobTrigger' && b.binding['source'] === 'EventGrid');
    assert.ok(fn, 'a blob trigger with source EventGrid');
    const sh = readFileSync(path.join(INFRA, 'scripts', 'postdeploy.sh'), 'utf8');
    const ps = readFileSync(path.join(INFRA, 'scripts', 'postdeploy.ps1'), 'utf8');
    assert.match(
      sh,
      new RegExp(`\\$\\{BLOB_TRIGGER_FUNCTION_NAME:-${fn.functionName}\\}`),
      'postdeploy.sh default function name',
    );
    assert.match(ps, new RegExp(`else \\{ '${fn.functionName}' \\}`), 'postdeploy.ps1 default function name');
    assert.equal(
      stringLiteral(main.params.get('blobTriggerFunctionName')?.defaultExpr ?? ''),
      fn.functionName,
      'main.bicep blobTriggerFunctionName default',
    );
    const azure = readFileSync(path.join(ROOT, 'azure.yaml'), 'utf8');
    assert.match(
      azure,
      /postdeploy:[\s\S]*postdeploy\.sh[\s\S]*postdeploy\.ps1/,
      'azure.yaml runs the postdeploy hook (sh and pwsh)',
    );
  });

  it('the Event Grid hook subscribes the ruleset blob trigger to rulesets/*.json in its container', () => {
    const fn = bindings.find(
      (b) =>
        b.binding.type === 'blobTrigger' &&
        b.binding['source'] === 'EventGrid' &&
        String(b.binding['path']).startsWith('%RULESETS_CONTAINER%/rulesets/'),
    );
    assert.ok(fn, 'a blob trigger with source EventGrid on %RULESETS_CONTAINER%/rulesets/');
    assert.match(String(fn.binding['path']), /\.json$/, 'the ruleset trigger path ends with .json');
    const sh = readFileSync(path.join(INFRA, 'scripts', 'postdeploy.sh'), 'utf8');
    const ps = readFileSync(path.join(INFRA, 'scripts', 'postdeploy.ps1'), 'utf8');
    assert.match(
      sh,
      new RegExp(`\\$\\{RULESET_TRIGGER_FUNCTION_NAME:-${fn.functionName}\\}`),
      'postdeploy.sh default ruleset function name',
    );
    assert.match(ps, new RegExp(`else \\{ '${fn.functionName}' \\}`), 'postdeploy.ps1 default ruleset function name');
    assert.match(sh, /rcontainer="\$\{RULESETS_CONTAINER:-\$container\}"/, 'postdeploy.sh ruleset container');
    assert.match(
      sh,
      /subscribe rulesets-blob-created "\$rfn" "\/blobServices\/default\/containers\/\$\{rcontainer\}\/blobs\/rulesets\/" \.json/,
      'postdeploy.sh subscribes rulesets/*.json to the ruleset trigger',
    );
    assert.match(
      ps,
      /Subscribe 'rulesets-blob-created' \$rfn "\/blobServices\/default\/containers\/\$rcontainer\/blobs\/rulesets\/" '\.json'/,
      'postdeploy.ps1 subscribes rulesets/*.json to the ruleset trigger',
    );
    // the script's default container is the one the app reads RULESETS_CONTAINER from
    const scope = fileScope(main);
    for (const p of plans) {
      const v: string | undefined = find(p, 'RULESETS_CONTAINER')?.value;
      assert.equal(
        v === undefined ? undefined : evaluate(v, scope),
        evaluate('storage.outputs.modelsContainerName', scope),
        `RULESETS_CONTAINER on ${p.plan} is the models container (the hook's default)`,
      );
    }
  });

  it('the Event Grid hook subscribes the signals blob trigger to features/*.json in its container', () => {
    const fn = bindings.find(
      (b) =>
        b.binding.type === 'blobTrigger' &&
        b.binding['source'] === 'EventGrid' &&
        String(b.binding['path']).startsWith('%SIGNALS_CONTAINER%/features/'),
    );
    assert.ok(fn, 'a blob trigger with source EventGrid on %SIGNALS_CONTAINER%/features/');
    assert.match(String(fn.binding['path']), /\.json$/, 'the signals trigger path ends with .json');
    const sh = readFileSync(path.join(INFRA, 'scripts', 'postdeploy.sh'), 'utf8');
    const ps = readFileSync(path.join(INFRA, 'scripts', 'postdeploy.ps1'), 'utf8');
    assert.match(sh, new RegExp(`\\$\\{SIGNALS_TRIGGER_FUNCTION_NAME:-${fn.functionName}\\}`), 'postdeploy.sh name');
    assert.match(ps, new RegExp(`else \\{ '${fn.functionName}' \\}`), 'postdeploy.ps1 default signals function name');
    assert.match(sh, /scontainer="\$\{SIGNALS_CONTAINER:-\$container\}"/, 'postdeploy.sh signals container');
    assert.match(
      sh,
      /subscribe signals-blob-created "\$sfn" "\/blobServices\/default\/containers\/\$\{scontainer\}\/blobs\/features\/" \.json/,
      'postdeploy.sh subscribes features/*.json to the signals trigger',
    );
    assert.match(
      ps,
      /Subscribe 'signals-blob-created' \$sfn "\/blobServices\/default\/containers\/\$scontainer\/blobs\/features\/" '\.json'/,
      'postdeploy.ps1 subscribes features/*.json to the signals trigger',
    );
    const scope = fileScope(main);
    for (const p of plans) {
      const v: string | undefined = find(p, 'SIGNALS_CONTAINER')?.value;
      assert.equal(
        v === undefined ? undefined : evaluate(v, scope),
        evaluate('storage.outputs.modelsContainerName', scope),
        `SIGNALS_CONTAINER on ${p.plan} is the models container (the hook's default)`,
      );
    }
  });

  it('the health probes in Bicep hit registered anonymous GET routes under host.json routePrefix', () => {
    const prefix = ((hostJson()['extensions'] as Record<string, Record<string, unknown>> | undefined)?.['http']?.[
      'routePrefix'
    ] ?? 'api') as string;
    const ca = readFileSync(path.join(INFRA, 'modules', 'functionapp-containerapps.bicep'), 'utf8');
    const probePaths = [...ca.matchAll(/path: '([^']+)'/g)].map((m) => m[1] as string);
    assert.ok(probePaths.length >= 2, 'probes declared');
    for (const p of probePaths) {
      const route = bindings.find(
        (b) =>
          b.binding.type === 'httpTrigger' &&
          `/${prefix}/${String(b.binding['route'])}` === p &&
          b.binding['authLevel'] === 'anonymous' &&
          (b.binding['methods'] as string[] | undefined)?.includes('GET') === true,
      );
      assert.ok(route, `probe path ${p} is a registered anonymous GET route`);
    }
  });
});

describe('infra contract: host.json', () => {
  it('host.json has the extension bundle v4 and the Service Bus behaviour the handlers rely on', () => {
    const h = hostJson();
    const bundle = h['extensionBundle'] as { id?: string; version?: string } | undefined;
    assert.equal(bundle?.id, 'Microsoft.Azure.Functions.ExtensionBundle', 'host.json extensionBundle.id');
    assert.match(bundle?.version ?? '', /^\[4\.\*?/, 'host.json extensionBundle.version covers 4.x');
    assert.equal(h['version'], '2.0', 'host.json version');
    const sb = (h['extensions'] as Record<string, Record<string, unknown>> | undefined)?.['serviceBus'];
    assert.notEqual(
      sb?.['autoCompleteMessages'],
      false,
      'serviceBus.autoCompleteMessages: scoreQueue completes by returning and redelivers by throwing',
    );
    assert.equal(
      typeof sb?.['maxConcurrentCalls'],
      'number',
      'serviceBus.maxConcurrentCalls (the platform scale rule and npm start read it)',
    );
  });
});
