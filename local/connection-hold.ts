/**
 * Holding a keep-alive connection after a refusal: the local host reads that connection's next request only
 * after a back-off, so a client that ignores `Retry-After` and sends again at once waits in its own TCP
 * connection (in the kernel's receive buffer) instead of in the host's event loop.
 *
 * Why: under a closed loop far above capacity every refused request comes straight back. However cheap a
 * refusal is (Node's HTTP parse and one write, about 50 µs here), 1 000 connections that get one each
 * round trip keep the event loop busy with refusals alone, and the admitted requests, which need that same
 * loop, lose their share of it. Holding the refused connections bounds the refusal rate to about
 * `connections ÷ back-off` without slowing any refusal itself: the 503 is written at once, and only the
 * connection's next request waits. A client that honours `Retry-After` never notices.
 *
 * It uses Node's own flag for pausing a server connection (`socket._paused`, the one Node's HTTP server
 * sets while a pipelined response is pending): with it set, neither the dumped request body nor Node's
 * own drain handling resumes the socket early.
 *
 * @module
 */
import type { Socket } from 'net';

/** Schedules `fn` after `ms` milliseconds (injected in tests); default an unref'd `setTimeout`. */
export type HoldScheduler = (fn: () => void, ms: number) => void;

const defaultScheduler: HoldScheduler = (fn, ms) => {
  setTimeout(fn, ms).unref();
};

/** Node's server-side socket with the HTTP server's pause flag and parser. */
interface ServerSocket extends Socket {
  _paused?: boolean;
  parser?: { pause(): void; resume(): void } | null;
}

/**
 * Stops reading `socket` for `ms` milliseconds, then resumes it (unless it was closed meanwhile). Does
 * nothing for `ms <= 0` or a socket that is already held or closed. Returns whether the socket is held.
 */
export function holdConnection(socket: Socket, ms: number, schedule: HoldScheduler = defaultScheduler): boolean {
  const s = socket as ServerSocket;
  if (ms <= 0 || s._paused === true || s.destroyed) return false;
  s._paused = true;
  s.pause();
  schedule(() => {
    if (s.destroyed || s._paused !== true) return;
    s._paused = false;
    s.parser?.resume();
    s.resume();
  }, ms);
  return true;
}
