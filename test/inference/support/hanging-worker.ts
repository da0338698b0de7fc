/** A stand-in inference worker that loads nothing, reports ready, and never answers a run (a hung native call). */
import { parentPort } from 'node:worker_threads';

if (parentPort !== null) {
  parentPort.postMessage({ type: 'ready', executionProviders: ['cpu'], loadMs: 0 });
  parentPort.on('message', (msg: { type: string }) => {
    if (msg.type === 'close') process.exit(0);
  });
}
