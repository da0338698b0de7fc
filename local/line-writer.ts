/**
 * `AsyncLineWriter`: the local host's log output. `console.log` on a file or a pipe is a synchronous
 * write on the event loop; this writer only appends a line to a buffer and flushes the buffer with one
 * asynchronous `fs.write` (on libuv's thread pool) per turn, so logging never blocks request handling.
 * The buffer is bounded: past `maxBufferedBytes` new lines are dropped and counted (one notice is written
 * when the writer catches up). On process exit whatever is still buffered is written synchronously.
 *
 * @module
 */
import * as fs from 'node:fs';

/** Options of {@link AsyncLineWriter}. */
export interface AsyncLineWriterOptions {
  /** File descriptor to write to. Default 1 (stdout). */
  readonly fd?: number;
  /** Bound on buffered, not yet written text, bytes (approximated by UTF-16 length). Default 1 MiB. */
  readonly maxBufferedBytes?: number;
}

/** Buffered, non-blocking line output (see the module comment). */
export class AsyncLineWriter {
  readonly #fd: number;
  readonly #max: number;
  #lines: string[] = [];
  #size = 0;
  #writing = false;
  #scheduled = false;
  #dropped = 0;
  readonly #idle: (() => void)[] = [];

  /** @param options see {@link AsyncLineWriterOptions} */
  constructor(options: AsyncLineWriterOptions = {}) {
    this.#fd = options.fd ?? 1;
    this.#max = options.maxBufferedBytes ?? 1024 * 1024;
    process.once('exit', () => this.flushSync());
  }

  /** Queues one line (a newline is added). Never blocks; drops the line when the buffer is full. */
  write(line: string): void {
    if (this.#size + line.length > this.#max) {
      this.#dropped++;
      return;
    }
    this.#lines.push(line);
    this.#size += line.length + 1;
    if (!this.#scheduled && !this.#writing) {
      this.#scheduled = true;
      setImmediate(() => this.#flush());
    }
  }

  /** Lines dropped so far because the buffer was full. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Resolves once everything queued so far has been written. */
  idle(): Promise<void> {
    if (!this.#writing && !this.#scheduled && this.#lines.length === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idle.push(resolve));
  }

  /** Writes what is buffered synchronously (process exit). */
  flushSync(): void {
    const text = this.#take();
    if (text.length > 0) {
      try {
        fs.writeSync(this.#fd, text);
      } catch {
        // nothing left to report it to
      }
    }
  }

  #take(): string {
    if (this.#dropped > 0) {
      this.#lines.push(`[local host] ${this.#dropped} log line(s) dropped: output was slower than logging`);
      this.#dropped = 0;
    }
    if (this.#lines.length === 0) return '';
    const text = `${this.#lines.join('\n')}\n`;
    this.#lines = [];
    this.#size = 0;
    return text;
  }

  #flush(): void {
    this.#scheduled = false;
    const text = this.#take();
    if (text.length === 0) {
      this.#idle.splice(0).forEach((r) => r());
      return;
    }
    this.#writing = true;
    const buf = Buffer.from(text, 'utf8');
    const writeFrom = (offset: number): void => {
      fs.write(this.#fd, buf, offset, buf.length - offset, null, (err, written) => {
        if (err === null && offset + written < buf.length) return writeFrom(offset + written);
        this.#writing = false;
        this.#flush(); // more lines may have arrived meanwhile
      });
    };
    writeFrom(0);
  }
}
