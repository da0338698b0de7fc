import assert from 'node:assert/strict';
import { outcomes } from './support/bicep-values';
import { mkdtempSync, mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as path from 'node:path';
import { describe, it } from 'node:test';
import {
  appSettings,
  evaluate,
  fileScope,
  moduleAppSettings,
  moduleScope,
  parseBicep,
  property,
  readBicep,
} from './support/bicep-reader';
import { arrayItems, objectProperties, stringLiteral, stripComments } from './support/bicep-text';

const MAIN = `// a comment with an apostrophe: the host's key { [
targetScope = 'resourceGroup'

@description('The host\\'s key (a } in a string).')
param name string
param size int = 3
param kind string = 'managed'
@secure()
param key string = ''

var ttl = 21600
var label = 'x-\${name}'
var base = [
  {
    name: 'A_SETTING'
    value: 'a' /* inline } comment */
  }
  {
    name: 'B_SETTING'
    value: size > 2 ? 'big' : 'small'
  }
]
var gpu = kind == 'managed'
  ? 'yes'
  : 'no'

module bus 'mod/bus.bicep' = if (kind == 'managed') {
  name: 'bus'
  params: {
    queueName: 'payments'
    windowSec: ttl
    appSettings: concat([
      {
        name: 'FIRST'
        value: 'x'
      }
    ], base)
  }
}

resource topic 'Microsoft.EventGrid/systemTopics@2022-06-15' = {
  name: 'evgt-\${name}'
  properties: {
    topicType: 'Microsoft.Storage.StorageAccounts'
  }
}

resource many 'Microsoft.Storage/x@2023-05-01' = [
  for c in ['a', 'b']: {
    name: c
  }
]

output QUEUE string = bus.outputs.queue
output WINDOW string = bus.outputs.window
`;

const BUS = `param queueName string
param windowSec int = 60
param appSettings array

resource q 'Microsoft.ServiceBus/namespaces/queues@2024-01-01' = {
  name: queueName
}

var env = concat(appSettings, [
  {
    name: 'LAST'
    secretRef: 'conn'
  }
])

output queue string = q.name
output window string = 'PT\${windowSec}S'
`;

describe('bicep text helpers', () => {
  it('strips comments but not comment-like text in strings, keeping line numbers', () => {
    const s = stripComments("var a = 'http://x' // c\n/* b\n */var b = 1");
    assert.equal(s.split('\n').length, 3);
    assert.match(s, /'http:\/\/x'/);
    assert.doesNotMatch(s, /\/\/ c|\/\*/);
  });

  it('splits arrays and objects on newlines and commas, respecting nesting and strings', () => {
    assert.deepEqual(arrayItems("[\n  'a,b'\n  { x: [1, 2] }\n]"), ["'a,b'", '{ x: [1, 2] }']);
    assert.deepEqual(arrayItems("['a', 'b']"), ["'a'", "'b'"]);
    const o = objectProperties("{\n  name: 'n'\n  'aad-enabled': 'true'\n  v: c ? 'a' : 'b'\n}");
    assert.deepEqual(
      [...o.entries()],
      [
        ['name', "'n'"],
        ['aad-enabled', "'true'"],
        ['v', "c ? 'a' : 'b'"],
      ],
    );
  });

  it('reads string literals, refusing interpolation', () => {
    assert.equal(stringLiteral("'it\\'s'"), "it's");
    assert.equal(stringLiteral("'a-${b}'"), undefined);
    assert.equal(stringLiteral('b'), undefined);
  });
});

describe('bicep reader', () => {
  const main = parseBicep(MAIN, 'main.bicep');

  it('reads params with and without defaults, vars (including multi-line ternaries), resources and outputs', () => {
    assert.deepEqual([...main.params.keys()], ['name', 'size', 'kind', 'key']);
    assert.equal(main.params.get('name')?.defaultExpr, undefined);
    assert.equal(main.params.get('size')?.defaultExpr, '3');
    assert.equal(main.vars.get('gpu'), "kind == 'managed'\n  ? 'yes'\n  : 'no'");
    assert.deepEqual(
      main.resources.map((r) => [r.symbol, r.target, r.loop]),
      [
        ['topic', 'Microsoft.EventGrid/systemTopics@2022-06-15', undefined],
        ['many', 'Microsoft.Storage/x@2023-05-01', "[\n  for c in ['a', 'b']:"],
      ],
    );
    assert.equal(main.modules[0]?.condition, "(kind == 'managed')");
    assert.equal(
      property(main.resources[0]?.body ?? '', 'properties.topicType'),
      "'Microsoft.Storage.StorageAccounts'",
    );
    assert.deepEqual([...main.outputs.keys()], ['QUEUE', 'WINDOW']);
  });

  it("collects app settings through concat, vars and a module's own additions", () => {
    const passed = appSettings(property(main.modules[0]?.body ?? '', 'params.appSettings') ?? '', main);
    assert.deepEqual(
      passed.map((s) => s.name),
      ['FIRST', 'A_SETTING', 'B_SETTING'],
    );
    const bus = parseBicep(BUS, 'bus.bicep');
    const inApp = moduleAppSettings(bus, passed);
    assert.deepEqual(
      inApp.map((s) => [s.name, s.secretRef]),
      [
        ['FIRST', undefined],
        ['A_SETTING', undefined],
        ['B_SETTING', undefined],
        ['LAST', "'conn'"],
      ],
    );
  });

  it('refuses app settings it cannot read, naming the expression', () => {
    assert.throws(
      () => appSettings("cond ? [] : [{ name: 'X'\nvalue: 'y' }]", main),
      /unsupported app settings expression: cond/,
    );
    assert.throws(() => appSettings("[{ name: 'X-${a}'\nvalue: 'y' }]", main), /without a literal name/);
  });

  it('evaluates literals, interpolation, string(), vars, params and module outputs across files', () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'bicep-'));
    mkdirSync(path.join(dir, 'mod'));
    writeFileSync(path.join(dir, 'main.bicep'), MAIN);
    writeFileSync(path.join(dir, 'mod', 'bus.bicep'), BUS);
    const scope = fileScope(readBicep(path.join(dir, 'main.bicep')));
    assert.equal(evaluate("'x'", scope), 'x');
    assert.equal(evaluate('string(ttl)', scope), '21600');
    assert.equal(evaluate('size', scope), 3);
    assert.equal(evaluate('name', scope), undefined, 'a param without a default is unknown');
    assert.equal(evaluate('bus.outputs.queue', scope), 'payments');
    assert.equal(evaluate('bus.outputs.window', scope), 'PT21600S');
    assert.equal(evaluate("size > 2 ? 'big' : 'small'", scope), undefined, 'operators are not evaluated');
    assert.equal(moduleScope(scope, 'bus').file.params.get('windowSec')?.defaultExpr, '60');
  });

  it('walks every value a setting can take; a runtime value is said so, an unreadable one is unknown', () => {
    const source = [
      "param plan string = 'cpu'",
      'param cap int = 0',
      'param secret string',
      "var isGpu = plan == 'gpu'",
      "var table = {\n  'a': { n: 1 }\n  'b': { n: 2 }\n}",
      "resource kv 'Microsoft.KeyVault/vaults@2023-07-01' = {\n  name: 'kv-1'\n}",
    ].join('\n');
    const scope = fileScope(parseBicep(source, 'walk.bicep'));
    const vals = (e: string): unknown => {
      const o = outcomes(e, scope);
      return o.kind === 'values' ? o.values : o.kind;
    };
    assert.deepEqual(vals("isGpu ? 'cuda,cpu' : 'cpu'"), ['cpu'], 'a condition known at the defaults picks its branch');
    assert.deepEqual(vals("cap > 0 ? string(cap) : '48'"), ['48']);
    assert.deepEqual(vals('string(table[plan].n)'), ['1', '2'], 'a table indexed by a param: every entry');
    assert.deepEqual(vals("'x-${plan}'"), ['x-cpu']);
    assert.equal(vals('kv.properties.vaultUri'), 'runtime');
    assert.equal(vals("split(kv!.properties.vaultUri, '/')[2]"), 'runtime');
    assert.equal(vals('secret'), 'runtime', 'a param without a default is a deployment input');
    assert.equal(vals("split(plan, ',')[0]"), 'unknown', 'a function it cannot run is not passed unchecked');
    assert.equal(vals('nothing'), 'unknown');
  });

  it('reports unbalanced brackets and unterminated strings', () => {
    assert.throws(() => parseBicep("resource r 'T@1' = {\n  name: 'x'\n", 'bad.bicep'), /unclosed bracket/);
    assert.throws(() => parseBicep("var a = 'open\n", 'bad.bicep'), /unterminated string/);
  });
});
