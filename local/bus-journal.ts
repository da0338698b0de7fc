/**
 * The on-disk journal of the embedded bus's durable queues (`npm start`): one append-only file per queue under a
 * directory. A send appends the message (one `write` for a whole batch), a settle (complete, dead-letter) appends an
 * ack of its id; a new bus replays what was sent and never acked, in order. The file is rewritten with only the
 * pending messages when it outgrows `compactBytes` (a temporary file renamed over it), so it stays bounded by the
 * messages waiting plus that threshold.
 *
 * A `write` returns once the bytes are in the operating system's page cache: a killed process (SIGTERM, SIGKILL)
 * loses nothing it had appended; only a crash of the machine itself can lose the last appends (no `fsync`).
 * A torn last line (the process killed in the middle of a write) is skipped on replay.
 */
import * as fs from 'node:fs';
import * as path from 'node:path';

/** A message as the journal keeps it. */
export interface JournalMessage {
  readonly messageId: string;
  readonly correlationId?: string;
  readonly body: unknown;
  readonly applicationProperties: Readonly<Record<string, string | number | boolean>>;
  readonly enqueuedTimeUtc: string;
}

/** Options of a {@link BusJournal}. */
export interface BusJournalOptions {
  /** The folder of the journal files (created with the first file: a bus that journals nothing writes nothing). */
  readonly dir: string;
  /** Queues kept on disk; every other entity stays in memory only. */
  readonly queues: readonly string[];
  /** A queue's file is compacted when it grows past this many bytes. Default 64 MiB. */
  readonly compactBytes?: number;
}

interface QueueFile {
  fd: number;
  bytes: number;
}

type Line = { readonly s: JournalMessage } | { readonly a: string };

/** The journal of a bus's durable queues (see the module comment). */
export class BusJournal {
  private readonly files = new Map<string, QueueFile>();
  private readonly durable: ReadonlySet<string>;
  private readonly compactBytes: number;

  constructor(private readonly o: BusJournalOptions) {
    this.durable = new Set(o.queues);
    this.compactBytes = o.compactBytes ?? 64 * 1024 ** 2;
  }

  /** Whether `queue` is kept on disk. */
  isDurable(queue: string): boolean {
    return this.durable.has(queue);
  }

  private file(queue: string): string {
    return path.join(this.o.dir, `${encodeURIComponent(queue)}.journal`);
  }

  /**
   * The messages sent to `queue` and not acked, in the order sent, then the file rewritten with only them.
   * Call once per queue, before any append.
   */
  replay(queue: string): JournalMessage[] {
    let text: string;
    try {
      text = fs.readFileSync(this.file(queue), 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
      return []; // nothing journalled yet: the file is made by the first append
    }
    const pending = new Map<string, JournalMessage[]>(); // id → sends not acked yet (ids may repeat)
    const order: JournalMessage[] = [];
    for (const raw of text.split('\n')) {
      if (raw === '') continue;
      let line: Line;
      try {
        line = JSON.parse(raw) as Line;
      } catch {
        continue; // a torn line: the process was killed in the middle of its write
      }
      if ('s' in line) {
        order.push(line.s);
        const list = pending.get(line.s.messageId);
        if (list === undefined) pending.set(line.s.messageId, [line.s]);
        else list.push(line.s);
      } else if (typeof line.a === 'string') pending.get(line.a)?.shift();
    }
    const live = new Set<JournalMessage>();
    for (const list of pending.values()) for (const m of list) live.add(m);
    const messages = order.filter((m) => live.has(m));
    this.rewrite(queue, messages);
    return messages;
  }

  /** Appends the sends of `messages` to `queue`'s file in one write. */
  appendSends(queue: string, messages: readonly JournalMessage[]): void {
    if (messages.length === 0) return;
    this.append(queue, messages.map((s) => JSON.stringify({ s }) + '\n').join(''));
  }

  /** Appends the ack of `messageId` (completed or dead-lettered: it is not replayed). */
  appendAck(queue: string, messageId: string): void {
    this.append(queue, JSON.stringify({ a: messageId }) + '\n');
  }

  /** Whether `queue`'s file has grown past the compaction threshold. */
  needsCompaction(queue: string): boolean {
    return (this.files.get(queue)?.bytes ?? 0) > this.compactBytes;
  }

  /** Rewrites `queue`'s file with only `pending` (the bus's waiting and unsettled messages, in order). */
  rewrite(queue: string, pending: readonly JournalMessage[]): void {
    const old = this.files.get(queue);
    if (old !== undefined) fs.closeSync(old.fd);
    const file = this.file(queue);
    const tmp = `${file}.tmp`;
    fs.mkdirSync(this.o.dir, { recursive: true });
    const text = pending.map((s) => JSON.stringify({ s }) + '\n').join('');
    fs.writeFileSync(tmp, text);
    const fd = fs.openSync(tmp, 'r+');
    fs.fsyncSync(fd);
    fs.closeSync(fd);
    fs.renameSync(tmp, file);
    this.files.set(queue, { fd: fs.openSync(file, 'a'), bytes: Buffer.byteLength(text) });
  }

  private append(queue: string, text: string): void {
    let f = this.files.get(queue);
    if (f === undefined) {
      fs.mkdirSync(this.o.dir, { recursive: true });
      f = { fd: fs.openSync(this.file(queue), 'a'), bytes: 0 };
      this.files.set(queue, f);
    }
    const buf = Buffer.from(text);
    for (let off = 0; off < buf.length;) off += fs.writeSync(f.fd, buf, off);
    f.bytes += buf.length;
  }

  /** Closes the files (what was appended stays). */
  close(): void {
    for (const f of this.files.values()) fs.closeSync(f.fd);
    this.files.clear();
  }
}
