/**
 * Open Inference Protocol (KServe V2 REST) conformance over real HTTP through the local Functions host: the
 * spec's request and response shapes, every supported datatype round-tripped through a generated model,
 * every error case as `{ "error": ... }` JSON, and batched requests under concurrency.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { configureSharedEngine } from '../../lib/app';
import { FEATURE_COUNT } from '../../lib/features/featurizer';
import type { LocalHost } from '../../local/host';
import { startHost } from '../support/local-host';
import { http, type HttpAnswer } from '../support/http';
import { assertError, echoModel, ELEM_TYPES, fixedModel, typesModel } from './support';

const BODY_LIMIT = 65_536;
let host: LocalHost;
let v2: string;

/** A deterministic feature row (17 values). */
const featureRow = (k: number): number[] => Array.from({ length: FEATURE_COUNT }, (_, i) => Math.sin(k * 7 + i) * 2);

const fraudInfer = (rows: number[][], extra: Record<string, unknown> = {}): Record<string, unknown> => ({
  inputs: [{ name: 'features', shape: [rows.length, FEATURE_COUNT], datatype: 'FP32', data: rows.flat() }],
  ...extra,
});

before(async () => {
  for (const k of ['REDIS_URL', 'ModelStorage', 'AzureWebJobsStorage']) delete process.env[k];
  Object.assign(process.env, { LOG_LEVEL: 'error', OIP_BODY_LIMIT_BYTES: String(BODY_LIMIT) });
  configureSharedEngine({
    oipModels: [
      { name: 'types', version: '1', bytes: typesModel() },
      { name: 'echo', version: '3', bytes: echoModel() },
      { name: 'fixed', version: '1', bytes: fixedModel() },
    ],
  });
  host = await startHost();
  v2 = `${host.url}/api/v2`;
});
after(() => host.dispose());

describe('OIP: endpoints and metadata', () => {
  it('registers every endpoint with authLevel function (health anonymous)', () => {
    const fns = new Map(host.functions.map((f) => [f.name, f]));
    const expect: [string, string, string, string][] = [
      ['oipServerMetadata', 'v2', 'GET', 'function'],
      ['oipServerLive', 'v2/health/live', 'GET', 'anonymous'],
      ['oipServerReady', 'v2/health/ready', 'GET', 'anonymous'],
      ['oipModelMetadata', 'v2/models/{name}', 'GET', 'function'],
      ['oipModelMetadataVersion', 'v2/models/{name}/versions/{version}', 'GET', 'function'],
      ['oipModelReady', 'v2/models/{name}/ready', 'GET', 'function'],
      ['oipModelReadyVersion', 'v2/models/{name}/versions/{version}/ready', 'GET', 'function'],
      ['oipModelInfer', 'v2/models/{name}/infer', 'POST', 'function'],
      ['oipModelInferVersion', 'v2/models/{name}/versions/{version}/infer', 'POST', 'function'],
    ];
    for (const [name, route, method, auth] of expect) {
      const f = fns.get(name);
      assert.equal(f?.route, route, name);
      assert.deepEqual(f?.methods, [method], name);
      assert.equal((f?.trigger as { authLevel?: string }).authLevel, auth, name);
    }
  });

  it('GET v2 is the server metadata', async () => {
    const r = await http().request('GET', v2);
    assert.equal(r.status, 200);
    assert.match(r.type, /^application\/json/);
    assert.deepEqual(r.json, { name: 'onnx-scoring-functions', version: '0.1.0', extensions: [] });
  });

  it('is live, and ready once the active model answers a sample inference', async () => {
    const live = await http().get(`${v2}/health/live`);
    assert.deepEqual(
      { status: live.status, type: live.type, json: live.json },
      {
        status: 200,
        type: 'application/json',
        json: { live: true },
      },
    );
    const ready = await http().request('GET', `${v2}/health/ready`);
    assert.deepEqual([ready.status, ready.json], [200, { ready: true }]);
  });

  it("describes the rollout's model from its ONNX graph, with -1 for the batch dimension", async () => {
    const expected = {
      name: 'fraud',
      versions: ['1.0.0'],
      platform: 'onnxruntime_onnx',
      inputs: [{ name: 'features', datatype: 'FP32', shape: [-1, FEATURE_COUNT] }],
      outputs: [{ name: 'score', datatype: 'FP32', shape: [-1, 1] }],
    };
    for (const path of ['/models/fraud', '/models/fraud/versions/1.0.0']) {
      const r = await http().request('GET', `${v2}${path}`);
      assert.equal(r.status, 200, path);
      assert.deepEqual(r.json, expected, path);
    }
    const ready = await http().request('GET', `${v2}/models/fraud/ready`);
    assert.deepEqual([ready.status, ready.json], [200, { name: 'fraud', ready: true }]);
    const vready = await http().request('GET', `${v2}/models/fraud/versions/1.0.0/ready`);
    assert.deepEqual([vready.status, vready.json], [200, { name: 'fraud', version: '1.0.0', ready: true }]);
  });

  it('describes a generated model with every datatype', async () => {
    const r = await http().request('GET', `${v2}/models/types`);
    assert.equal(r.status, 200);
    const inputs = r.json['inputs'] as { name: string; datatype: string; shape: number[] }[];
    assert.deepEqual(r.json['versions'], ['1']);
    assert.deepEqual(
      inputs.map((i) => [i.name, i.datatype, i.shape]),
      [...Object.keys(ELEM_TYPES).map((d) => [`in_${d}`, d, [-1, 3]]), ['cast_in', 'INT32', [-1, 2]]],
    );
    const outputs = r.json['outputs'] as { name: string; datatype: string }[];
    assert.deepEqual(outputs.at(-1), { name: 'cast_out', datatype: 'FP64', shape: [-1, 2] });
    const fixed = await http().request('GET', `${v2}/models/fixed`);
    assert.deepEqual(fixed.json['inputs'], [{ name: 'm', datatype: 'FP32', shape: [2, 3] }]);
  });
});

describe('OIP: inference', () => {
  it("answers the spec's response shape, echoing the id, with per-request timing parameters", async () => {
    const rows = [featureRow(1), featureRow(2), featureRow(3)];
    const r = await http().request(
      'POST',
      `${v2}/models/fraud/infer`,
      fraudInfer(rows, { id: 'req-42', parameters: { a: 1 } }),
    );
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.match(r.type, /^application\/json/);
    assert.deepEqual(Object.keys(r.json).sort(), ['id', 'model_name', 'model_version', 'outputs', 'parameters']);
    assert.deepEqual([r.json['model_name'], r.json['model_version'], r.json['id']], ['fraud', '1.0.0', 'req-42']);
    const p = r.json['parameters'] as Record<string, number>;
    assert.deepEqual(Object.keys(p).sort(), ['batch_size', 'inference_ms', 'queue_ms']);
    assert.ok(p['batch_size'] !== undefined && p['batch_size'] >= 3, JSON.stringify(p));
    assert.ok((p['queue_ms'] ?? -1) >= 0 && (p['inference_ms'] ?? -1) >= 0, JSON.stringify(p));
    const [out] = r.json['outputs'] as { name: string; datatype: string; shape: number[]; data: number[] }[];
    assert.deepEqual([out?.name, out?.datatype, out?.shape], ['score', 'FP32', [3, 1]]);
    assert.ok(out?.data.every((s) => s >= 0 && s <= 1));
    // each row's result equals that row scored alone, and equals what /api/score's model produces
    for (let i = 0; i < rows.length; i++) {
      const alone = await http().request(
        'POST',
        `${v2}/models/fraud/versions/1.0.0/infer`,
        fraudInfer([rows[i] as number[]]),
      );
      const [o] = alone.json['outputs'] as { data: number[] }[];
      assert.equal(o?.data[0], out?.data[i], `row ${i}`);
    }
  });

  it('accepts data nested to the shape exactly as flat data', async () => {
    const rows = [featureRow(4), featureRow(5)];
    const flat = await http().request('POST', `${v2}/models/fraud/infer`, fraudInfer(rows));
    const nested = await http().request('POST', `${v2}/models/fraud/infer`, {
      inputs: [{ name: 'features', shape: [2, FEATURE_COUNT], datatype: 'FP32', data: rows }],
    });
    assert.equal(nested.status, 200, JSON.stringify(nested.json));
    assert.deepEqual(nested.json['outputs'], flat.json['outputs']);
  });

  it('round-trips every supported datatype through the generated model (and casts INT32 to FP64)', async () => {
    const values: Record<keyof typeof ELEM_TYPES, unknown[]> = {
      BOOL: [true, false, true, false, false, true],
      UINT8: [0, 1, 255, 7, 128, 254],
      UINT16: [0, 1, 65535, 300, 32768, 9],
      UINT32: [0, 1, 4294967295, 70000, 2147483648, 5],
      UINT64: [0, 1, Number.MAX_SAFE_INTEGER, 2 ** 40, 123456789012, 3],
      INT8: [-128, 127, 0, -1, 1, 64],
      INT16: [-32768, 32767, 0, -1, 1, 1000],
      INT32: [-2147483648, 2147483647, 0, -1, 1, 100000],
      INT64: [Number.MIN_SAFE_INTEGER, Number.MAX_SAFE_INTEGER, 0, -1, 2 ** 40, -(2 ** 35)],
      FP32: [0, -1.5, 0.25, 3.4028234663852886e38, -1e-7, 65504],
      FP64: [0, -1.5, 0.1, 1.7976931348623157e308, -5e-324, Math.PI],
    };
    const inputs = Object.entries(values).map(([d, data]) => ({ name: `in_${d}`, shape: [2, 3], datatype: d, data }));
    inputs.push({ name: 'cast_in', shape: [2, 2], datatype: 'INT32', data: [-3, 0, 7, 2147483647] });
    const r = await http().request('POST', `${v2}/models/types/infer`, { id: 'types', inputs });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    const outs = new Map(
      (r.json['outputs'] as { name: string; datatype: string; shape: number[]; data: unknown[] }[]).map((o) => [
        o.name,
        o,
      ]),
    );
    for (const [d, data] of Object.entries(values)) {
      const o = outs.get(`out_${d}`);
      const expected = d === 'FP32' ? Array.from(Float32Array.from(data as number[])) : data;
      assert.deepEqual([o?.datatype, o?.shape, o?.data], [d, [2, 3], expected], d);
    }
    assert.deepEqual(outs.get('cast_out'), {
      name: 'cast_out',
      datatype: 'FP64',
      shape: [2, 2],
      data: [-3, 0, 7, 2147483647],
    });
  });

  it('returns only the requested outputs, in the order asked', async () => {
    const one = (d: string, v: unknown): Record<string, unknown> => ({
      name: `in_${d}`,
      shape: [1, 3],
      datatype: d,
      data: [v, v, v],
    });
    const inputs = [
      ...Object.keys(ELEM_TYPES).map((d) => one(d, d === 'BOOL' ? true : 1)),
      { name: 'cast_in', shape: [1, 2], datatype: 'INT32', data: [1, 2] },
    ];
    const r = await http().request('POST', `${v2}/models/types/infer`, {
      inputs,
      outputs: [{ name: 'out_INT8' }, { name: 'out_BOOL', parameters: { binary_data: true } }],
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json['outputs'], [
      { name: 'out_INT8', datatype: 'INT8', shape: [1, 3], data: [1, 1, 1] },
      { name: 'out_BOOL', datatype: 'BOOL', shape: [1, 3], data: [true, true, true] },
    ]);
  });

  it('runs a model without a batch axis on its own', async () => {
    const r = await http().request('POST', `${v2}/models/fixed/infer`, {
      inputs: [
        {
          name: 'm',
          shape: [2, 3],
          datatype: 'FP32',
          data: [
            [1, 2, 3],
            [4, 5, 6],
          ],
        },
      ],
    });
    assert.equal(r.status, 200, JSON.stringify(r.json));
    assert.deepEqual(r.json['outputs'], [{ name: 'n', datatype: 'FP32', shape: [2, 3], data: [1, 2, 3, 4, 5, 6] }]);
    assert.equal((r.json['parameters'] as Record<string, number>)['batch_size'], 1);
  });

  it('batches concurrent requests through the micro-batcher, each getting back exactly its own rows', async () => {
    let batched = false;
    for (let wave = 0; wave < 10 && !batched; wave++) {
      const requests = Array.from({ length: 24 }, (_, k) => {
        const rows = 1 + (k % 4);
        const data = Array.from({ length: rows * 4 }, (_, i) => wave * 1e6 + k * 1000 + i);
        return { k, rows, data };
      });
      const replies = await Promise.all(
        requests.map((q) =>
          http().request(
            'POST',
            `${v2}/models/echo/infer`,
            { id: `w${wave}-${q.k}`, inputs: [{ name: 'x', shape: [q.rows, 4], datatype: 'FP32', data: q.data }] },
            { headers: { 'content-type': 'application/json', 'x-deadline-ms': '10000' } },
          ),
        ),
      );
      replies.forEach((r, k) => {
        const q = requests[k] as (typeof requests)[number];
        assert.equal(r.status, 200, JSON.stringify(r.json));
        assert.equal(r.json['id'], `w${wave}-${q.k}`);
        assert.deepEqual(r.json['outputs'], [{ name: 'y', datatype: 'FP32', shape: [q.rows, 4], data: q.data }]);
        const size = (r.json['parameters'] as Record<string, number>)['batch_size'] ?? 0;
        assert.ok(size >= q.rows);
        if (size > q.rows) batched = true;
      });
    }
    assert.ok(batched, 'no request ever shared a batch in 10 waves of 24 concurrent requests');
  });
});

describe('OIP: errors are { "error": ... } JSON', () => {
  const infer = (body: unknown, model = 'fraud'): Promise<HttpAnswer> =>
    http().request('POST', `${v2}/models/${model}/infer`, body);
  const features = (over: Record<string, unknown>): Record<string, unknown> => ({
    inputs: [{ name: 'features', shape: [1, FEATURE_COUNT], datatype: 'FP32', data: featureRow(9), ...over }],
  });

  it('refuses each bad request with a 400 naming the problem', async () => {
    const cases: [string, unknown, RegExp][] = [
      [
        'shape vs data length',
        features({ shape: [2, FEATURE_COUNT] }),
        /inputs\.0\.data: has 17 value\(s\) but shape \[2, 17\] needs 34/,
      ],
      ['rank', features({ shape: [FEATURE_COUNT] }), /inputs\.0\.shape: has rank 1; the model input is \[-1, 17\]/],
      ['width', features({ shape: [1, 16], data: featureRow(9).slice(0, 16) }), /inputs\.0\.shape: dimension 1 is 16/],
      [
        'negative dim',
        features({ shape: [-1, FEATURE_COUNT] }),
        /inputs\.0\.shape: must be a list of non-negative integers/,
      ],
      [
        'non-integer dim',
        features({ shape: [1.5, FEATURE_COUNT] }),
        /inputs\.0\.shape: must be a list of non-negative integers/,
      ],
      ['absurd shape', features({ shape: [1e9, FEATURE_COUNT] }), /shape \[1000000000, 17\] needs 17000000000/],
      ['huge dims', features({ shape: [2 ** 53, 2 ** 53 - 1] }), /inputs\.0\.shape/],
      ['zero dim', features({ shape: [0, FEATURE_COUNT], data: [] }), /empty tensors are not supported/],
      [
        'unknown input',
        features({ name: 'feature' }),
        /inputs\.0\.name: unknown input; the model's inputs are: features/,
      ],
      ['missing input', { inputs: [] }, /inputs: must be a non-empty array/],
      [
        'missing named input',
        { inputs: [{ name: 'in_BOOL', shape: [1, 3], datatype: 'BOOL', data: [true, true, true] }] },
        /missing input "in_UINT8"/,
      ],
      [
        'unknown output',
        { ...features({}), outputs: [{ name: 'scores' }] },
        /outputs\.0\.name: unknown output; the model's outputs are: score/,
      ],
      [
        'datatype mismatch',
        features({ datatype: 'FP64' }),
        /inputs\.0\.datatype: is FP64; the model input "features" is FP32/,
      ],
      ['unknown datatype', features({ datatype: 'float32' }), /inputs\.0\.datatype: is required \(a datatype/],
      ['FP16 refused', features({ datatype: 'FP16' }), /FP16 is not supported by this server/],
      ['BYTES refused', features({ datatype: 'BYTES' }), /BYTES is not supported by this server/],
      [
        'string element',
        features({ data: ['abc', ...featureRow(9).slice(1)] }),
        /inputs\.0\.data\.0: must be a finite number \(FP32\)/,
      ],
      [
        'null element',
        features({ data: [...featureRow(9).slice(0, 3), null, ...featureRow(9).slice(4)] }),
        /inputs\.0\.data\.3: must be a finite number/,
      ],
      [
        '"NaN" element',
        features({ data: ['NaN', ...featureRow(9).slice(1)] }),
        /inputs\.0\.data\.0: must be a finite number/,
      ],
      [
        'bad nesting',
        features({ data: [featureRow(9).slice(0, 8), featureRow(9).slice(8)] }),
        /must be flat, or nested to the shape/,
      ],
      [
        'integer out of range',
        { inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', data: [1, 2, 3, 1e39] }] },
        /outside the FP32 range/,
      ],
      ['array body', [1], /The body must be a JSON object/],
      ['string body', '"infer"', /The body must be a JSON object/],
      ['null body', 'null', /The body must be a JSON object/],
      ['malformed JSON', '{"inputs": [', /not valid JSON/],
      ['__proto__ key', '{"__proto__": {"x": 1}, "inputs": []}', /__proto__: is a forbidden key/],
      [
        '__proto__ in an input',
        `{"inputs": [{"name": "features", "shape": [1, 17], "datatype": "FP32", "data": ${JSON.stringify(featureRow(9))}, "__proto__": {"polluted": true}}]}`,
        /inputs\.0\.__proto__: is a forbidden key/,
      ],
      [
        '__proto__ in parameters',
        `{"parameters": {"__proto__": 1}, ${JSON.stringify(features({})).slice(1)}`,
        /parameters\.__proto__: is a forbidden key/,
      ],
      ['unknown field', { ...features({}), extra: 1 }, /extra: unknown field/],
      ['id not a string', { ...features({}), id: 42 }, /id: must be a string/],
      [
        'binary extension',
        features({ parameters: { binary_data_size: 68 } }),
        /binary tensor extension is not supported/,
      ],
    ];
    for (const [label, body, pattern] of cases) {
      const model = label === 'missing named input' ? 'types' : label === 'integer out of range' ? 'echo' : 'fraud';
      assertError(await infer(body, model), 400, pattern, label);
    }
    assert.equal(({} as Record<string, unknown>)['polluted'], undefined);
  });

  it('answers 404 for an unknown model or version, on every endpoint', async () => {
    for (const [method, path] of [
      ['GET', '/models/nope'],
      ['GET', '/models/nope/ready'],
      ['POST', '/models/nope/infer'],
      ['GET', '/models/fraud/versions/9.9.9'],
      ['GET', '/models/fraud/versions/9.9.9/ready'],
      ['POST', '/models/fraud/versions/9.9.9/infer'],
      ['GET', '/models/types/versions/2/ready'],
    ] as const) {
      const r = await http().request(
        method,
        `${v2}${path}`,
        method === 'POST' ? fraudInfer([featureRow(1)]) : undefined,
      );
      assertError(r, 404, /Unknown model "nope"|has no version/, `${method} ${path}`);
    }
  });

  it('caps the body (413) and requires JSON (415)', async () => {
    const big = JSON.stringify({
      inputs: [{ name: 'x', shape: [1, 4], datatype: 'FP32', data: new Array(BODY_LIMIT).fill(1) }],
    });
    assertError(await infer(big, 'echo'), 413, /at most 65536 bytes/);
    assertError(
      await http().request('POST', `${v2}/models/echo/infer`, 'x=1', { headers: { 'content-type': 'text/plain' } }),
      415,
      /must be JSON/,
    );
  });
});
