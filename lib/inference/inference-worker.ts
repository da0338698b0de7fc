/**
 * Worker-thread entry of the {@link WorkerPool}: holds one ONNX Runtime session and runs one batch at a
 * time, so the blocking native calls (model load and inference) never run on the main event loop.
 * Compiled to `dist/lib/inference/inference-worker.js`; started by the pool, never imported.
 */
import { parentPort, workerData } from 'node:worker_threads';
import { createSession, runTensors, type LoadedSession } from './ort-session';
import { view } from './tensor';
import { FAULT_EXIT_CODE, type FromWorker, type ToWorker, type WireTensor, type WorkerInit } from './worker-protocol';

const port = parentPort;
if (port === null) throw new Error('inference-worker must run in a worker thread');
const init = workerData as WorkerInit;
let loaded: LoadedSession | undefined;
let exitOnNextRun = false;
let chain: Promise<void> = Promise.resolve();

function post(msg: FromWorker, transfer: ArrayBuffer[] = []): void {
  port?.postMessage(msg, transfer);
}

function firstLine(err: unknown): string {
  return (err instanceof Error ? err.message : String(err)).split('\n')[0] ?? '';
}

async function start(): Promise<void> {
  const t0 = performance.now();
  try {
    // ORT cannot read a SharedArrayBuffer: copy once into this thread's own buffer (freed after load).
    const bytes = new Uint8Array(init.model.byteLength);
    bytes.set(new Uint8Array(init.model));
    loaded = await createSession(bytes, init.session);
    post({
      type: 'ready',
      executionProviders: loaded.executionProviders,
      ...(loaded.fallbackReason === undefined ? {} : { fallbackReason: loaded.fallbackReason }),
      loadMs: performance.now() - t0,
    });
  } catch (err) {
    post({ type: 'initFailed', message: firstLine(err) });
  }
}

async function run(id: number, inputs: readonly WireTensor[], outputs: readonly string[]): Promise<void> {
  if (exitOnNextRun) process.exit(FAULT_EXIT_CODE); // ends this worker thread only
  if (loaded === undefined) {
    post({ type: 'runFailed', id, message: 'the session is not loaded' });
    return;
  }
  try {
    const t0 = performance.now();
    const out = await runTensors(
      loaded.session,
      inputs.map((t) => ({ name: t.name, type: t.type, dims: t.dims, data: view(t.type, t.buffer) })),
      outputs,
    );
    const inferenceMs = performance.now() - t0;
    // runTensors returns owned copies: each buffer holds exactly its tensor, safe to transfer
    const wire = out.map((t) => ({ name: t.name, type: t.type, dims: t.dims, buffer: t.data.buffer as ArrayBuffer }));
    post(
      { type: 'result', id, outputs: wire, inferenceMs },
      wire.map((t) => t.buffer),
    );
  } catch (err) {
    post({ type: 'runFailed', id, message: firstLine(err) });
  }
}

async function close(): Promise<void> {
  await loaded?.session.release().catch(() => undefined);
  loaded = undefined;
  post({ type: 'closed' });
  port?.close();
}

port.on('message', (msg: ToWorker) => {
  switch (msg.type) {
    case 'run':
      chain = chain.then(() => run(msg.id, msg.inputs, msg.outputs));
      break;
    case 'fault':
      exitOnNextRun = true;
      break;
    case 'close':
      chain = chain.then(close);
      break;
  }
});

void start();
