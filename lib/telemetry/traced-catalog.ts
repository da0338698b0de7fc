/**
 * Telemetry for the Open Inference Protocol path: the composition root wraps each model catalog with
 * {@link tracedCatalog}, so every `infer` on a served model records `scoring.inference.duration` (as a scored
 * payment does, by `model.version`) and, when tracing is on, the same `inference.queue` / `inference.run` spans as a scored
 * payment. The tensors themselves are never recorded.
 */
import type { InferenceBackend } from '../inference/backend';
import type { ModelCatalog, ServedModel } from '../oip/model-catalog';
import type { Telemetry } from './telemetry';
import { inferenceSpans } from './traced-components';

/** `catalog`, whose served models' `infer` calls are measured (and traced when tracing is on). */
export function tracedCatalog(catalog: ModelCatalog, t: Telemetry): ModelCatalog {
  // one wrapper per backend and version: a backend serves one version for its whole life
  const wrapped = new WeakMap<InferenceBackend, InferenceBackend>();
  const wrap = (served: ServedModel): InferenceBackend => {
    let backend = wrapped.get(served.backend);
    if (backend === undefined) {
      backend = measuredBackend(served.backend, served.name, served.version, t);
      wrapped.set(served.backend, backend);
    }
    return backend;
  };
  return {
    has: (name) => catalog.has(name),
    get names() {
      return catalog.names;
    },
    versions: (name) => catalog.versions(name),
    declared: (name, version) => catalog.declared(name, version),
    acquire: async (name, version) => {
      const served = await catalog.acquire(name, version);
      return { name: served.name, version: served.version, backend: wrap(served), release: () => served.release() };
    },
  };
}

function measuredBackend(b: InferenceBackend, name: string, version: string, t: Telemetry): InferenceBackend {
  const spans = t.tracer.enabled ? inferenceSpans(b, name, version) : undefined;
  return {
    get info() {
      return b.info;
    },
    run: (input, rows, options) => b.run(input, rows, options),
    infer: async (request, options) => {
      const call = () => b.infer(request, options);
      const r = await (spans === undefined ? call() : spans(request.rows ?? 1, call));
      t.inferred(version, r.timing.inferenceMs);
      return r;
    },
    dispose: () => b.dispose(),
  };
}
