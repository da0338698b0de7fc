/**
 * Infrastructure contract: the code (config schema, registered bindings) and the infrastructure (Bicep,
 * local.settings.sample.json, host.json, README, azd files) agree. Every failure names the missing or
 * mismatched item. `npm run test:infra` runs this folder alone; `npm test` runs it with the rest.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import type { SettingInfo } from '../../lib/config/config';
import {
  evaluate,
  fileScope,
  moduleScope,
  property,
  readBicep,
  type AppSetting,
  type BicepFile,
} from './support/bicep-reader';
import { objectProperties, stringLiteral } from './support/bicep-text';
import { ROLES, roleGrants } from './support/grants';
import {
  codeSettings,
  hostJson,
  INFRA,
  isoDurationSec,
  mainBicep,
  planSettings,
  readmeSettingNames,
  registeredBindings,
  ROOT,
  sampleValues,
  settingReferences,
  type Binding,
  type PlanSettings,
} from './support/sources';

/**
 * Settings the code reads that have no default and are deliberately NOT set in Azure, with the reason.
 * A new setting without a default fails the contract until it is set in the Bicep app settings or listed here.
 */
const NOT_SET_IN_AZURE: Record<string, string> = {
  MODEL_VERSION: 'unset = the fleet pointer / newest version; set only to pin',
  REDIS_URL: 'local development; Azure uses REDIS_HOST with Entra ID',
  CONTEXT_SOURCE_URL: 'only with CONTEXT_SOURCE=http',
  ModelStorage: 'connection-string form; Azure uses the identity form ModelStorage__*',
  AzureWebJobsStorage: 'connection-string form; Azure uses AzureWebJobsStorage__accountName with the identity',
  INSTANCE_ID: 'the platform names the instance (WEBSITE_INSTANCE_ID / CONTAINER_APP_REPLICA_NAME)',
  WEBSITE_INSTANCE_ID: 'set by the platform (Flex)',
  CONTAINER_APP_REPLICA_NAME: 'set by the platform (Container Apps)',
};

/** App settings read by the platform or the runtime, not by lib/config. */
const PLATFORM_SETTINGS = new Set(['FUNCTIONS_WORKER_RUNTIME', 'MALLOC_MMAP_THRESHOLD_']);

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

/** main.bicep params a user does not set through azd (no main.parameters.json entry), with the reason. */
const PARAMS_NOT_MAPPED: Record<string, string> = { tags: 'an object; azd adds azd-env-name itself' };

let settings: readonly SettingInfo[];
let bindings: Binding[];
let main: BicepFile;
let plans: PlanSettings[];

before(async () => {
  settings = codeSettings();
  bindings = await registeredBindings();
  main = mainBicep();
  plans = planSettings(main);
});

const names = (list: readonly AppSetting[]): Set<string> => new Set(list.map((s) => s.name));
const find = (plan: PlanSettings, name: string): AppSetting | undefined => plan.settings.find((s) => s.name === name);

describe('infra contract: settings', () => {
  it('reads the code: a non-empty settings list and registered functions', () => {
    assert.ok(
      settings.some((s) => s.name === 'MODEL_NAME'),
      'configSettings() lists MODEL_NAME',
    );
    assert.ok(
      bindings.some((b) => b.functionName === 'scoreQueue'),
      'the scoreQueue registration is seen',
    );
  });

  it('every setting without a default is set by the Bicep app settings of every plan', () => {
    const problems: string[] = [];
    for (const s of settings.filter((x) => x.defaultValue === undefined)) {
      if (s.name in NOT_SET_IN_AZURE) continue;
      for (const p of plans) if (!names(p.settings).has(s.name)) problems.push(`${s.name} missing on ${p.plan}`);
    }
    for (const n of Object.keys(NOT_SET_IN_AZURE)) {
      if (!settings.some((s) => s.name === n))
        problems.push(`${n} is listed in NOT_SET_IN_AZURE but the code no longer reads it`);
    }
    assert.deepEqual(
      problems,
      [],
      `Bicep app settings (infra-bicep/main.bicep var appSettings): ${problems.join('; ')}`,
    );
  });

  it('every Bicep app setting is read by the code, a binding connection or the platform, and literal values parse', () => {
    const connections = new Set(
      bindings.map((b) => b.binding['connection']).filter((c): c is string => typeof c === 'string'),
    );
    connections.add('AzureWebJobsStorage');
    const problems: string[] = [];
    for (const p of plans) {
      for (const a of p.settings) {
        const code = settings.find((s) => s.name === a.name);
        const conn = /^([A-Za-z0-9]+)__/.exec(a.name)?.[1];
        if (code === undefined && !PLATFORM_SETTINGS.has(a.name) && !(conn !== undefined && connections.has(conn))) {
          problems.push(`${a.name} (${p.plan}) is read by nothing`);
        }
        const v = a.value === undefined ? undefined : evaluate(a.value, fileScope(main));
        if (code !== undefined && typeof v === 'string') {
          try {
            code.parse(v);
          } catch {
            problems.push(`${a.name}='${v}' (${p.plan}) is not a valid value`);
          }
        }
      }
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });

  it('every setting the code reads is in local.settings.sample.json Values: "" (unset) or its default', () => {
    const values = sampleValues();
    const problems: string[] = [];
    for (const s of settings) {
      const raw = values[s.name];
      if (raw === undefined) problems.push(`${s.name} missing`);
      else if (raw !== '' && s.defaultValue !== undefined) {
        let parsed: unknown;
        try {
          parsed = s.parse(raw);
        } catch {
          parsed = Symbol('invalid');
        }
        if (JSON.stringify(parsed) !== JSON.stringify(s.defaultValue)) {
          problems.push(`${s.name}='${raw}' is not its default ${JSON.stringify(s.defaultValue)}`);
        }
      }
    }
    assert.deepEqual(problems, [], `local.settings.sample.json: ${problems.join('; ')}`);
  });

  it('every setting the code reads is in the README settings table', () => {
    const documented = readmeSettingNames();
    const missing = settings.map((s) => s.name).filter((n) => !documented.has(n));
    assert.deepEqual(missing, [], `README.md ## Settings lacks: ${missing.join(', ')}`);
  });
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

/** Rows of the markdown tables (in `text`) whose header has `column`: cell of `column` keyed by the row's text. */
function tableColumn(text: string, column: string): { row: string; cell: string }[] {
  const out: { row: string; cell: string }[] = [];
  let index: number | undefined; // undefined = outside a table; -1 = a table without that column
  for (const line of text.split('\n')) {
    const t = line.trim();
    if (!t.startsWith('|')) {
      index = undefined;
      continue;
    }
    const cells = t
      .split('|')
      .slice(1, -1)
      .map((c) => c.trim());
    if (index === undefined) index = cells.indexOf(`\`${column}\``);
    else if (index >= 0 && !/^-+$/.test(cells[0] ?? '')) out.push({ row: t, cell: cells[index] ?? '' });
  }
  return out;
}

describe('infra contract: GPU sizing tables', () => {
  it('the README and docs/deploy.md tables show the batch cap and workers main.bicep sets per GPU profile', () => {
    const sizing = main.vars.get('gpuSizing') ?? '{}';
    const batchCpu =
      plans[0] === undefined ? undefined : evaluate(find(plans[0], 'BATCH_MAX_SIZE')?.value ?? '', fileScope(main));
    const docs = [
      ['README.md', readFileSync(path.join(ROOT, 'README.md'), 'utf8')],
      ['docs/deploy.md', readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8')],
    ] as const;
    const problems: string[] = [];
    for (const [profile, body] of objectProperties(sizing)) {
      const expected = {
        BATCH_MAX_SIZE_GPU: property(body, 'batchMaxSizeGpu'),
        INFERENCE_WORKERS: property(body, 'gpus'),
      };
      for (const [doc, text] of docs) {
        for (const [column, value] of Object.entries(expected)) {
          const rows = tableColumn(text, column).filter((r) => r.row.includes(`\`${profile}\``));
          if (rows.length === 0) problems.push(`${doc}: no ${column} row for ${profile}`);
          for (const r of rows)
            if (r.cell.split(' ')[0] !== value)
              problems.push(`${doc}: ${profile} ${column} '${r.cell}', Bicep ${String(value)}`);
        }
      }
    }
    for (const r of tableColumn(docs[0][1], 'BATCH_MAX_SIZE')) {
      if (r.cell.split(' ')[0] !== String(batchCpu))
        problems.push(`README.md: BATCH_MAX_SIZE '${r.cell}', Bicep ${String(batchCpu)}`);
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });
});

describe('infra contract: host.json, azd parameters, Node version', () => {
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

  it('main.parameters.json maps every main.bicep param, with the same defaults', () => {
    const json = (
      JSON.parse(readFileSync(path.join(INFRA, 'main.parameters.json'), 'utf8')) as {
        parameters: Record<string, { value: unknown }>;
      }
    ).parameters;
    const problems: string[] = [];
    for (const [name, p] of main.params) {
      if (name in PARAMS_NOT_MAPPED) continue;
      const entry = json[name];
      if (entry === undefined) {
        problems.push(`${name} is not mapped`);
        continue;
      }
      const m = /^\$\{[A-Z0-9_]+(?:=(.*))?\}$/.exec(String(entry.value));
      if (m === null) problems.push(`${name}: value ${String(entry.value)} is not \${VAR} or \${VAR=default}`);
      const bicepDefault = p.defaultExpr === undefined ? undefined : evaluate(p.defaultExpr, fileScope(main));
      if (m?.[1] !== undefined && bicepDefault !== undefined && String(bicepDefault) !== m[1]) {
        problems.push(`${name}: azd default '${m[1]}' differs from the Bicep default '${String(bicepDefault)}'`);
      }
    }
    for (const name of Object.keys(json))
      if (!main.params.has(name)) problems.push(`${name} is mapped but main.bicep declares no such param`);
    assert.deepEqual(problems, [], `main.parameters.json: ${problems.join('; ')}`);
  });

  it('Azure runs Node 22: both images, the placeholder, Flex; package.json engines stays >=20', () => {
    for (const f of ['Dockerfile', 'Dockerfile.gpu']) {
      assert.match(readFileSync(path.join(ROOT, f), 'utf8'), /^ARG NODE_MAJOR=22$/m, `${f} NODE_MAJOR`);
    }
    assert.equal(
      stringLiteral(main.params.get('flexNodeVersion')?.defaultExpr ?? ''),
      '22',
      'main.bicep flexNodeVersion',
    );
    const ca = readBicep(path.join(INFRA, 'modules', 'functionapp-containerapps.bicep'));
    assert.match(ca.vars.get('placeholderImage') ?? '', /node:4-node22'$/, 'placeholder image');
    const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string } };
    assert.equal(pkg.engines?.node, '>=20', 'package.json engines.node');
  });
});
