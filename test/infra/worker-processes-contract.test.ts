/**
 * Infrastructure contract, worker processes: main.bicep sets FUNCTIONS_WORKER_PROCESS_COUNT on every plan from the
 * replica's or instance's vCPUs, with the inference threads of each process capped so that processes × inference
 * workers × intra-op threads never exceed the vCPUs; on CPU, one process per vCPU.
 */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import * as path from 'node:path';
import { before, describe, it } from 'node:test';
import { evaluate, fileScope, property, type BicepFile } from './support/bicep-reader';
import { objectProperties, stripComments } from './support/bicep-text';
import { find, loadFixture } from './support/contract-fixture';
import type { PlanSettings } from './support/sources';

const MAIN = path.resolve(__dirname, '../../../infra-bicep/main.bicep');
let main: BicepFile;
let plans: PlanSettings[];

before(async () => {
  ({ main, plans } = await loadFixture());
});

/** The `@allowed([...])` values right above `param <name>`, as strings. */
function allowed(param: string): string[] {
  const text = stripComments(readFileSync(MAIN, 'utf8'));
  const at = text.search(new RegExp(`^param\\s+${param}\\b`, 'm'));
  const head = text.slice(0, at);
  const list = head.slice(head.lastIndexOf('@allowed(['));
  return [...list.matchAll(/^\s*'?([\w.-]+)'?\s*$/gm)].map((m) => m[1] as string);
}

/** A sizing table of main.bicep: key → { vcpus, processes, inferenceWorkers, intraOpThreads } (numbers or exprs). */
function table(name: string): Map<string, Record<string, string>> {
  const text = main.vars.get(name);
  assert.ok(text !== undefined, `main.bicep declares var ${name}`);
  const out = new Map<string, Record<string, string>>();
  for (const [k, body] of objectProperties(text)) {
    const row: Record<string, string> = {};
    for (const f of ['vcpus', 'processes', 'inferenceWorkers', 'intraOpThreads']) row[f] = property(body, f) ?? '';
    out.set(k.replace(/^'|'$/g, ''), row);
  }
  return out;
}

const num = (expr: string): number => Number(evaluate(expr, fileScope(main)));

describe('infra contract: worker processes', () => {
  it('every plan sets FUNCTIONS_WORKER_PROCESS_COUNT, INFERENCE_WORKERS and ORT_INTRA_OP_THREADS from one sizing', () => {
    for (const p of plans)
      for (const [name, field] of [
        ['FUNCTIONS_WORKER_PROCESS_COUNT', 'processes'],
        ['INFERENCE_WORKERS', 'inferenceWorkers'],
        ['ORT_INTRA_OP_THREADS', 'intraOpThreads'],
      ] as const)
        assert.equal(find(p, name)?.value?.trim(), `string(processSizing.${field})`, `${name} on ${p.plan}`);
  });

  it('processes × inference workers × intra-op threads ≤ vCPUs for every size; CPU runs one process per vCPU', () => {
    const gpuSizing = new Map(
      [...objectProperties(main.vars.get('gpuSizing') ?? '{}')].map(([k, b]) => [k.replace(/^'|'$/g, ''), b]),
    );
    const cases: [string, string, Record<string, string>][] = [];
    for (const t of ['cpuProcessSizing', 'flexProcessSizing', 'gpuProcessSizing'])
      for (const [k, row] of table(t)) cases.push([t, k, row]);
    assert.ok(cases.length >= 9, 'three tables');
    for (const [t, k, row] of cases) {
      const gpu = t === 'gpuProcessSizing';
      // the GPU plan's workers are one CUDA session per GPU unless overridden: the profile's GPU count
      const workers =
        gpu && row['inferenceWorkers'] === 'effectiveGpuInferenceWorkers'
          ? Number(property(gpuSizing.get(k) ?? '{}', 'gpus'))
          : num(row['inferenceWorkers'] ?? '');
      const [vcpus, processes, threads] = [
        num(row['vcpus'] ?? ''),
        num(row['processes'] ?? ''),
        num(row['intraOpThreads'] ?? ''),
      ];
      for (const v of [vcpus, processes, workers, threads])
        assert.ok(Number.isInteger(v) && v >= 1, `${t}.${k}: ${JSON.stringify(row)}`);
      assert.ok(
        processes * workers * threads <= vcpus,
        `${t}.${k}: ${processes} × ${workers} × ${threads} > ${vcpus} vCPUs`,
      );
      if (!gpu) assert.equal(processes, vcpus, `${t}.${k}: one process per vCPU`);
      if (gpu)
        assert.equal(
          vcpus,
          Math.floor(Number(property(gpuSizing.get(k) ?? '{}', 'cpu')?.replace(/'/g, ''))),
          `${k} vCPUs`,
        );
    }
    const cpuCores = (k: string): number => Math.max(1, Math.floor(Number(k)));
    for (const [k, row] of table('cpuProcessSizing')) assert.equal(num(row['vcpus'] ?? ''), cpuCores(k), `${k} cores`);
    for (const [k, row] of table('flexProcessSizing'))
      assert.equal(num(row['vcpus'] ?? ''), Math.max(1, Math.floor(Number(k) / 2048)), `${k} MB: 2 GiB per vCPU`);
  });

  it('covers every replica size and instance memory the parameters allow, and every GPU profile', () => {
    assert.deepEqual([...table('cpuProcessSizing').keys()].sort(), allowed('cpuReplicaCores').sort());
    assert.deepEqual([...table('flexProcessSizing').keys()].sort(), allowed('flexInstanceMemoryMB').sort());
    const profiles = [...objectProperties(main.vars.get('gpuSizing') ?? '{}').keys()].map((k) =>
      k.replace(/^'|'$/g, ''),
    );
    assert.deepEqual([...table('gpuProcessSizing').keys()].sort(), profiles.sort());
  });
});
