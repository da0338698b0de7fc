import { fork, type ChildProcess } from 'node:child_process';
import * as path from 'node:path';
import { within } from '../../support/eventually';
import type { Delivery, DeliveryReply } from './scorer-process';

/** A scorer process started by the test (see `scorer-process.ts`). */
export interface ScorerProcess {
  /**
   * Delivers one message; resolves with the reply, or `'crashed'` if the process died first. Fails if neither
   * happens within 30 s.
   */
  deliver(d: Omit<Delivery, 'id'>): Promise<DeliveryReply | 'crashed'>;
  readonly alive: boolean;
  stop(): Promise<void>;
}

let nextId = 0;
/** How long a delivery may take to be answered (scoring, storing and publishing one message, on a loaded machine). */
const REPLY_WITHIN_MS = 30_000;

/** Starts a scorer process with `env` added; waits (at most 60 s) until its engine is ready. */
export function startScorer(env: Record<string, string>): Promise<ScorerProcess> {
  const child: ChildProcess = fork(path.join(__dirname, 'scorer-process.js'), [], {
    env: { ...process.env, ...env, ASYNC_TEST_SCORER: '1' },
    stdio: ['ignore', 'ignore', 'pipe', 'ipc'],
  });
  let err = '';
  child.stderr?.on('data', (d: Buffer) => (err = (err + d.toString()).slice(-4000)));
  const exited = new Promise<void>((res) => child.once('exit', () => res()));
  const pending = new Map<number, (r: DeliveryReply | 'crashed') => void>();
  child.on('message', (m: unknown) => {
    const r = m as DeliveryReply;
    pending.get(r.id)?.(r);
    pending.delete(r.id);
  });
  void exited.then(() => {
    for (const done of pending.values()) done('crashed');
    pending.clear();
  });
  const handle: ScorerProcess = {
    deliver: async (d) => {
      if (child.exitCode !== null || child.signalCode !== null) return 'crashed';
      const id = nextId++;
      const reply = new Promise<DeliveryReply | 'crashed'>((resolve) => pending.set(id, resolve));
      child.send({ ...d, id } satisfies Delivery);
      try {
        return await within(
          reply,
          `the scorer process's reply to delivery ${d.meta.deliveryCount} of message ${d.meta.messageId}`,
          REPLY_WITHIN_MS,
        );
      } finally {
        pending.delete(id);
      }
    },
    get alive() {
      return child.exitCode === null && child.signalCode === null;
    },
    stop: async () => {
      if (!handle.alive) return;
      const kill = setTimeout(() => child.kill('SIGKILL'), 10_000);
      child.disconnect();
      await exited;
      clearTimeout(kill);
    },
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`scorer process not ready within 60 s: ${err}`));
    }, 60_000);
    void exited.then(() => {
      clearTimeout(timer);
      reject(new Error(`scorer process exited before it was ready: ${err}`));
    });
    child.once('message', (m) => {
      if (m !== 'ready') return;
      clearTimeout(timer);
      resolve(handle);
    });
  });
}
