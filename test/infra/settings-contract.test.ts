/**
 * Infrastructure contract, settings side: what lib/config reads against the Bicep app settings of every
 * plan, the local settings samples, docs/configuration.md, main.parameters.json and the documented GPU tables. Every
 * failure names the missing or mismatched item. `npm run test:infra` runs this folder; `npm test` includes it.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import type { SettingInfo } from '../../lib/config/env-schema';
import { evaluate, fileScope, moduleScope, property, readBicep, type BicepFile } from './support/bicep-reader';
import { outcomes } from './support/bicep-values';
import { arrayItems, matchBracket, objectProperties, stringLiteral, stripComments } from './support/bicep-text';
import { find, loadFixture, names, tableColumn } from './support/contract-fixture';
import { loadConfig } from '../../lib/config/config';
import {
  hostJson,
  INFRA,
  documentedSettingNames,
  ROOT,
  SAMPLES,
  sampleValues,
  type Binding,
  type PlanSettings,
} from './support/sources';

/**
 * Settings the code reads that have no default and are deliberately NOT set in Azure, with the reason.
 * A new setting without a default fails the contract until it is set in the Bicep app settings or listed here.
 */
const NOT_SET_IN_AZURE: Record<string, string> = {
  MODEL_VERSION: 'unset = the fleet pointer / newest version; set only to pin',
  ROLLOUT_STATE_DIR: 'embedded defaults only: Azure keeps the pointers on Redis',
  REDIS_URL: 'local development; Azure uses REDIS_HOST with Entra ID',
  CONTEXT_SOURCE_URL: 'only with CONTEXT_SOURCE=http',
  ModelStorage: 'connection-string form; Azure uses the identity form ModelStorage__*',
  AzureWebJobsStorage: 'connection-string form; Azure uses AzureWebJobsStorage__accountName with the identity',
  INSTANCE_ID: 'the platform names the instance (WEBSITE_INSTANCE_ID / CONTAINER_APP_REPLICA_NAME)',
  WEBSITE_INSTANCE_ID: 'set by the platform (Flex)',
  CONTAINER_APP_REPLICA_NAME: 'set by the platform (Container Apps)',
  AZURE_OPENAI_API_KEY: 'local use only; Azure authenticates with Entra ID (the app identity, AZURE_CLIENT_ID)',
  AZURE_OPENAI_KEY_SECRET_NAME: 'only for a key-based Azure OpenAI resource; Entra ID is the default',
  ESCALATION_BAND_LOW: 'unset = the manifest review threshold',
  ESCALATION_BAND_HIGH: 'unset = the manifest decline threshold',
  ESCALATION_USER_HASH_KEY:
    'a secret: Azure reads it from Key Vault (ESCALATION_USER_HASH_KEY_SECRET_NAME), never an app setting',
  ESCALATION_USER_HASH_KEY_SECRET_NAME: 'optional; unset = a random key per process (hashes differ across instances)',
  TELEMETRY_USER_ID_KEY: 'optional; unset = a random key per process (user.id hashes differ across instances)',
  CASE_QUEUES_FILE: 'optional; unset = one queue, general, 24 h SLA (a deployment ships its own queues file)',
};

/** App settings read by the platform or the runtime, not by lib/config. */
const PLATFORM_SETTINGS = new Set([
  'FUNCTIONS_WORKER_RUNTIME',
  'FUNCTIONS_WORKER_PROCESS_COUNT',
  'MALLOC_MMAP_THRESHOLD_',
]);

/** main.bicep params a user does not set through azd (no main.parameters.json entry), with the reason. */
const PARAMS_NOT_MAPPED: Record<string, string> = { tags: 'an object; azd adds azd-env-name itself' };

/** The Node major Azure runs by default, and every major a deployment may choose. */
const AZURE_NODE_DEFAULT = '24';
const AZURE_NODE_CHOICES = ['22', '24'];

/** The values of the `@allowed([...])` decorator on `param <name>` in a Bicep file, or undefined without one. */
function allowedValues(bicepText: string, param: string): string[] | undefined {
  const text = stripComments(bicepText);
  const decl = new RegExp(`^param\\s+${param}\\b`, 'm').exec(text);
  if (decl === null) return undefined;
  // Decorators sit on the lines just above the declaration, after the previous declaration.
  const before = text.slice(0, decl.index);
  const prev = Math.max(
    ...[...before.matchAll(/^(?:param|var|output|resource|module)\s/gm)].map((m) => m.index ?? 0),
    0,
  );
  const at = before.indexOf('@allowed(', prev);
  if (at < 0) return undefined;
  const open = before.indexOf('[', at);
  return arrayItems(before.slice(open, matchBracket(before, open) + 1)).map((x) => stringLiteral(x) ?? x);
}

/**
 * Every place that says which Node Azure runs, each compared with AZURE_NODE_DEFAULT / AZURE_NODE_CHOICES:
 * one problem per disagreeing place.
 */
function nodeVersionProblems(): string[] {
  const problems: string[] = [];
  for (const f of ['Dockerfile', 'Dockerfile.gpu']) {
    const args = [...readFileSync(path.join(ROOT, f), 'utf8').matchAll(/^ARG NODE_MAJOR=(\S*)$/gm)].map((m) => m[1]);
    if (args.length !== 1 || args[0] !== AZURE_NODE_DEFAULT)
      problems.push(`${f}: ARG NODE_MAJOR=${args.join(',') || '(none)'}, expected ${AZURE_NODE_DEFAULT}`);
  }
  const mainText = readFileSync(path.join(INFRA, 'main.bicep'), 'utf8');
  const flexDefault = stringLiteral(main.params.get('flexNodeVersion')?.defaultExpr ?? '');
  if (flexDefault !== AZURE_NODE_DEFAULT)
    problems.push(`main.bicep flexNodeVersion default '${String(flexDefault)}', expected ${AZURE_NODE_DEFAULT}`);
  const flexAllowed = allowedValues(mainText, 'flexNodeVersion');
  if (JSON.stringify(flexAllowed) !== JSON.stringify(AZURE_NODE_CHOICES))
    problems.push(
      `main.bicep flexNodeVersion @allowed ${JSON.stringify(flexAllowed)}, expected ${JSON.stringify(AZURE_NODE_CHOICES)}`,
    );
  const json = JSON.parse(readFileSync(path.join(INFRA, 'main.parameters.json'), 'utf8')) as {
    parameters: Record<string, { value: unknown } | undefined>;
  };
  const azd = /=([^}]*)\}$/.exec(String(json.parameters['flexNodeVersion']?.value))?.[1];
  if (azd !== AZURE_NODE_DEFAULT)
    problems.push(`main.parameters.json flexNodeVersion default '${String(azd)}', expected ${AZURE_NODE_DEFAULT}`);
  const flexModulePath = path.join(INFRA, 'modules', 'functionapp-flex.bicep');
  const flexModule = readBicep(flexModulePath);
  const moduleDefault = stringLiteral(flexModule.params.get('nodeVersion')?.defaultExpr ?? '');
  if (moduleDefault !== AZURE_NODE_DEFAULT)
    problems.push(
      `functionapp-flex.bicep nodeVersion default '${String(moduleDefault)}', expected ${AZURE_NODE_DEFAULT}`,
    );
  const moduleAllowed = allowedValues(readFileSync(flexModulePath, 'utf8'), 'nodeVersion');
  if (JSON.stringify(moduleAllowed) !== JSON.stringify(AZURE_NODE_CHOICES))
    problems.push(
      `functionapp-flex.bicep nodeVersion @allowed ${JSON.stringify(moduleAllowed)}, expected ${JSON.stringify(AZURE_NODE_CHOICES)}`,
    );
  const ca = readBicep(path.join(INFRA, 'modules', 'functionapp-containerapps.bicep'));
  const placeholder = stringLiteral(ca.vars.get('placeholderImage') ?? '');
  if (placeholder !== `mcr.microsoft.com/azure-functions/node:4-node${AZURE_NODE_DEFAULT}`)
    problems.push(
      `functionapp-containerapps.bicep placeholderImage '${String(placeholder)}', expected node:4-node${AZURE_NODE_DEFAULT}`,
    );
  const pkg = JSON.parse(readFileSync(path.join(ROOT, 'package.json'), 'utf8')) as { engines?: { node?: string } };
  if (pkg.engines?.node !== '>=22')
    problems.push(`package.json engines.node '${String(pkg.engines?.node)}', expected >=22`);
  return problems;
}

let settings: readonly SettingInfo[];
let bindings: Binding[];
let main: BicepFile;
let plans: PlanSettings[];

before(async () => {
  ({ settings, bindings, main, plans } = await loadFixture());
});

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

  it('every Bicep app setting is read by the code, a binding connection or the platform, and every value it can take parses', () => {
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
        if (a.value === undefined) continue; // a secretRef: a Key Vault reference, resolved by the platform
        // a setting main.bicep passes is an expression of main's scope; one the module adds, of the module's
        const inMain = outcomes(a.value, fileScope(main));
        const o = inMain.kind === 'unknown' ? outcomes(a.value, moduleScope(fileScope(main), p.module)) : inMain;
        if (o.kind === 'unknown') problems.push(`${a.name} (${p.plan}): cannot evaluate ${o.expr}`);
        if (code === undefined || o.kind !== 'values') continue; // runtime: known only at deployment
        for (const v of o.values) {
          if (typeof v === 'object') problems.push(`${a.name} (${p.plan}) can be an object`);
          else
            try {
              code.parse(String(v));
            } catch {
              problems.push(`${a.name}='${String(v)}' (${p.plan}) is not a valid value`);
            }
        }
      }
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });

  for (const file of SAMPLES) {
    it(`every setting the code reads is in ${file} Values: "" (unset) or its default, unless local-only`, () => {
      const values = sampleValues(file);
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
      assert.deepEqual(problems, [], `${file}: ${problems.join('; ')}`);
    });
  }

  it('local.settings.sample.json runs on the embedded defaults: no setting without a default is set', () => {
    const values = sampleValues(SAMPLES[0]);
    const set = settings
      .filter((s) => s.defaultValue === undefined && (values[s.name] ?? '') !== '')
      .map((s) => s.name);
    assert.deepEqual(
      set,
      [],
      `local.settings.sample.json sets ${set.join(', ')}: copying it would need more than npm start`,
    );
    const config = loadConfig(values);
    assert.equal(config.redis.url, undefined, 'no Redis');
  });

  it('local.settings.redis-azurite.sample.json sets exactly local Redis and Azurite', () => {
    const values = sampleValues(SAMPLES[1]);
    const set = Object.fromEntries(
      settings
        .filter((s) => s.defaultValue === undefined && (values[s.name] ?? '') !== '')
        .map((s) => [s.name, values[s.name]]),
    );
    assert.deepEqual(set, { REDIS_URL: 'redis://127.0.0.1:6379', AzureWebJobsStorage: 'UseDevelopmentStorage=true' });
    assert.equal(loadConfig(values).redis.url, 'redis://127.0.0.1:6379');
  });

  it('every setting the code reads is in the docs/configuration.md settings table', () => {
    const documented = documentedSettingNames();
    const missing = settings.map((s) => s.name).filter((n) => !documented.has(n));
    assert.deepEqual(missing, [], `docs/configuration.md ## Settings lacks: ${missing.join(', ')} (run npm run docs)`);
  });
});

describe('infra contract: GPU sizing tables', () => {
  it('the docs/deploy.md per-plan table shows the batch caps and workers main.bicep sets', () => {
    const sizing = main.vars.get('gpuSizing') ?? '{}';
    const batchCpu =
      plans[0] === undefined ? undefined : evaluate(find(plans[0], 'BATCH_MAX_SIZE')?.value ?? '', fileScope(main));
    const docs = [['docs/deploy.md', readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8')]] as const;
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
    const cpuRows = tableColumn(docs[0][1], 'BATCH_MAX_SIZE');
    if (cpuRows.length === 0) problems.push('docs/deploy.md: no BATCH_MAX_SIZE column');
    for (const r of cpuRows) {
      if (r.cell.split(' ')[0] !== String(batchCpu))
        problems.push(`docs/deploy.md: BATCH_MAX_SIZE '${r.cell}', Bicep ${String(batchCpu)}`);
    }
    assert.deepEqual(problems, [], problems.join('; '));
  });
});

describe('infra contract: azd parameters, Node version', () => {
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

  it('every azd variable of main.parameters.json is in the docs/deploy.md azd table', () => {
    const text = readFileSync(path.join(INFRA, 'main.parameters.json'), 'utf8');
    const variables = new Set([...text.matchAll(/\$\{([A-Z0-9_]+)/g)].map((m) => m[1] as string));
    const deploy = readFileSync(path.join(ROOT, 'docs', 'deploy.md'), 'utf8');
    const start = deploy.search(/^### azd environment variables\s*$/m);
    const table = deploy
      .slice(start)
      .split('\n')
      .filter((l) => l.startsWith('|'))
      .join('\n');
    const setByAzd = new Set(['AZURE_ENV_NAME', 'SERVICE_API_IMAGE_NAME']);
    const missing = [...variables].filter((v) => !setByAzd.has(v) && !table.includes(`\`${v}\``));
    assert.ok(start >= 0, 'docs/deploy.md has a "### azd environment variables" section');
    assert.deepEqual(missing, [], `docs/deploy.md azd variables table lacks: ${missing.join(', ')}`);
  });

  it('Azure runs Node 24 by default, 22 kept as a choice: both images, the placeholder, Flex and its module', () => {
    const problems = nodeVersionProblems();
    assert.deepEqual(problems, [], `Node version: ${problems.join('; ')}`);
  });
});

describe('infra contract: host.json HTTP throttles and the platforms’ per-instance concurrency', () => {
  /** The burst one instance must take whole (docs/admission.md). */
  const BURST = 500;
  const http = (): {
    maxConcurrentRequests?: unknown;
    maxOutstandingRequests?: unknown;
    dynamicThrottlesEnabled?: unknown;
  } => ((hostJson()['extensions'] as Record<string, unknown> | undefined)?.['http'] ?? {}) as Record<string, unknown>;
  const int = (v: unknown, what: string): number => {
    assert.ok(
      typeof v === 'number' && Number.isInteger(v) && v >= 1,
      `host.json extensions.http.${what} is set (a positive integer): ${String(v)}`,
    );
    return v;
  };
  /** The literal numbers of `expr`'s branches (`a > 0 ? a : (isGpu ? 100 : 50)` → 100, 50). */
  const literals = (expr: string): number[] => [...expr.matchAll(/[?:]\s*\(?\s*(\d+)\b/g)].map((m) => Number(m[1]));
  const moduleCall = (symbol: string) => {
    const call = main.modules.find((m) => m.symbol === symbol);
    assert.ok(call !== undefined, `main.bicep calls module ${symbol}`);
    return { call, mod: readBicep(path.resolve(INFRA, call.target)) };
  };

  it('declares maxConcurrentRequests and maxOutstandingRequests; a burst fits; dynamic throttles off', () => {
    const h = http();
    const concurrent = int(h.maxConcurrentRequests, 'maxConcurrentRequests');
    const outstanding = int(h.maxOutstandingRequests, 'maxOutstandingRequests');
    assert.ok(
      outstanding >= concurrent,
      `maxOutstandingRequests ${outstanding} >= maxConcurrentRequests ${concurrent}`,
    );
    assert.ok(
      outstanding >= BURST,
      `a burst of ${BURST} is held, never refused with 429 (maxOutstandingRequests ${outstanding})`,
    );
    assert.equal(
      h.dynamicThrottlesEnabled,
      false,
      'dynamic throttles (429 on host counters, blind to deadlines) are off',
    );
    const ceiling = settings.find((s) => s.name === 'ADMISSION_MAX_INFLIGHT')?.defaultValue;
    assert.ok(
      typeof ceiling === 'number' && concurrent <= ceiling,
      `maxConcurrentRequests ${concurrent} <= ADMISSION_MAX_INFLIGHT ${String(ceiling)}: the engine's ceiling never refuses what the host passes`,
    );
  });

  it('every per-instance HTTP concurrency the Bicep can set is at most maxConcurrentRequests', () => {
    const concurrent = int(http().maxConcurrentRequests, 'maxConcurrentRequests');
    const problems: string[] = [];
    const effective = main.vars.get('effectiveHttpConcurrency');
    assert.ok(effective !== undefined, 'main.bicep var effectiveHttpConcurrency');
    const defaults = literals(effective);
    assert.ok(defaults.length >= 2, `plan defaults read from "${effective}"`);
    for (const d of defaults) if (d > concurrent) problems.push(`main.bicep plan default ${d}`);
    const text = readFileSync(path.join(INFRA, 'main.bicep'), 'utf8');
    const cap = /@maxValue\((\d+)\)\s*\n\s*param httpConcurrentRequestsPerReplica\b/.exec(text)?.[1];
    if (cap === undefined || Number(cap) > concurrent)
      problems.push(
        `main.bicep param httpConcurrentRequestsPerReplica needs @maxValue(<= ${concurrent}), has ${cap ?? 'none'}`,
      );
    for (const [symbol, param] of [
      ['functionAppContainerApps', 'httpConcurrentRequestsPerReplica'],
      ['functionAppFlex', 'httpPerInstanceConcurrency'],
    ] as const) {
      const { call, mod } = moduleCall(symbol);
      const passed = property(call.body, `params.${param}`);
      if (passed?.trim() !== 'effectiveHttpConcurrency')
        problems.push(`${symbol} is passed ${param}: ${passed ?? 'nothing'}`);
      const dflt = Number(mod.params.get(param)?.defaultExpr);
      if (!(dflt <= concurrent)) problems.push(`${call.target} param ${param} default ${String(dflt)}`);
    }
    const flex = moduleCall('functionAppFlex').mod;
    const wired = flex.resources.some((r) =>
      /perInstanceConcurrency:\s*httpPerInstanceConcurrency/.test(r.body.replace(/\s+/g, ' ')),
    );
    if (!wired)
      problems.push(
        'functionapp-flex.bicep: scaleAndConcurrency.triggers.http.perInstanceConcurrency is not httpPerInstanceConcurrency',
      );
    const aca = moduleCall('functionAppContainerApps').mod;
    const acaText = readFileSync(path.resolve(INFRA, moduleCall('functionAppContainerApps').call.target), 'utf8');
    if (
      !/concurrentRequests:\s*string\(httpConcurrentRequestsPerReplica\)/.test(acaText) ||
      aca.params.get('httpConcurrentRequestsPerReplica') === undefined
    )
      problems.push('functionapp-containerapps.bicep: the http scale rule is not httpConcurrentRequestsPerReplica');
    assert.deepEqual(
      problems,
      [],
      `per-instance HTTP concurrency above host.json maxConcurrentRequests ${concurrent}: ${problems.join('; ')}`,
    );
  });
});
