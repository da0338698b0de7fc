/** The micro-batcher's waiting room: the open batch (a FIFO of request slices) and closed batches waiting for a worker. */
import type { AppError } from '../errors/errors';
import type { CloseReason } from './batcher-types';
import type { NamedTensor, TensorRequest, TensorResult } from './tensor';

/** One caller's request as the batcher tracks it (rows, deadline, its share of results). */
export interface PendingRequest {
  readonly request: TensorRequest;
  /** Requests share a batch only when their keys are equal (same inputs, tail dims and outputs). */
  readonly key: string;
  /** Rows along the batch axis (1 for a request without one). */
  readonly rows: number;
  /** Absolute deadline on the batcher's clock, ms (`Infinity` for none). */
  readonly deadline: number;
  readonly enqueuedAt: number;
  /** Its rows of each requested output, filled as its parts finish. */
  readonly outputs: NamedTensor[];
  /** Parts not yet scored. */
  remaining: number;
  settled: boolean;
  queueMs: number;
  inferenceMs: number;
  batchSize: number;
  readonly resolve: (r: TensorResult) => void;
  readonly reject: (e: AppError) => void;
}

/** A request as it enters the queue: nothing scored yet. */
export function pendingRequest(
  request: TensorRequest,
  key: string,
  rows: number,
  deadline: number,
  enqueuedAt: number,
  resolve: (r: TensorResult) => void,
  reject: (e: AppError) => void,
): PendingRequest {
  return {
    request,
    key,
    rows,
    deadline,
    enqueuedAt,
    outputs: [],
    remaining: 0,
    settled: false,
    queueMs: 0,
    inferenceMs: 0,
    batchSize: 0,
    resolve,
    reject,
  };
}

/** A slice of one request: `rows` rows from row `offset` (requests larger than a batch are split). */
export interface Part {
  readonly req: PendingRequest;
  readonly offset: number;
  readonly rows: number;
}

/** A closed batch: whole parts, at most the maximum batch size in rows. */
export interface Batch {
  readonly parts: Part[];
  readonly rows: number;
  readonly reason: CloseReason;
}

/** What the open batch would hold if it closed now. */
export interface OpenHead {
  readonly rows: number;
  /** Earliest deadline among its requests, ms. */
  readonly earliest: number;
  /** Arrival of its oldest request, ms. */
  readonly firstAt: number;
}

/** Open and closed batches, with row counts kept for the queue bound. Parts of settled requests are dropped lazily. */
export class BatchQueue {
  private readonly open: Part[] = [];
  private readonly staged: Batch[] = [];
  private openRows = 0;
  private stagedRows = 0;

  /** @param max most rows per batch. */
  constructor(private readonly max: number) {}

  /** Rows waiting (open and closed batches). */
  get rows(): number {
    return this.openRows + this.stagedRows;
  }

  /** Closed batches waiting for a worker. */
  get stagedCount(): number {
    return this.staged.length;
  }

  /** Queues a request, split into parts of at most `max` rows; sets its `remaining`. */
  add(req: PendingRequest): void {
    for (let offset = 0; offset < req.rows; offset += this.max) {
      this.open.push({ req, offset, rows: Math.min(this.max, req.rows - offset) });
      req.remaining++;
    }
    this.openRows += req.rows;
  }

  /** The open batch as it would close now. Drops parts of settled requests on the way. */
  peek(): OpenHead {
    let rows = 0;
    let earliest = Number.POSITIVE_INFINITY;
    let firstAt = Number.POSITIVE_INFINITY;
    let key: string | undefined;
    for (let i = 0; i < this.open.length;) {
      const p = this.open[i] as Part;
      if (p.req.settled) {
        this.open.splice(i, 1);
        this.openRows -= p.rows;
        continue;
      }
      if (rows + p.rows > this.max || (key !== undefined && p.req.key !== key)) break;
      key = p.req.key;
      rows += p.rows;
      earliest = Math.min(earliest, p.req.deadline);
      firstAt = Math.min(firstAt, p.req.enqueuedAt);
      i++;
    }
    return { rows, earliest, firstAt };
  }

  /** Closes the open batch (its first parts, up to `max` rows); `undefined` if it is empty. */
  take(reason: CloseReason): Batch | undefined {
    const { rows } = this.peek();
    if (rows === 0) return undefined;
    let n = 0;
    let count = 0;
    while (count < this.open.length && n + (this.open[count] as Part).rows <= rows)
      n += (this.open[count++] as Part).rows;
    this.openRows -= rows;
    return { parts: this.open.splice(0, count), rows, reason };
  }

  /** Puts a closed batch in line for a worker (`front`: ahead of the others). */
  stage(batch: Batch, front = false): void {
    if (front) this.staged.unshift(batch);
    else this.staged.push(batch);
    this.stagedRows += batch.rows;
  }

  /** The next closed batch, or the open one closed as `idle`, or `undefined` when nothing waits. */
  next(): Batch | undefined {
    const staged = this.staged.shift();
    if (staged === undefined) return this.take('idle');
    this.stagedRows -= staged.rows;
    return staged;
  }

  /** The next closed batch only, or `undefined`. */
  nextStaged(): Batch | undefined {
    const staged = this.staged.shift();
    if (staged !== undefined) this.stagedRows -= staged.rows;
    return staged;
  }

  /** Empties the queue, returning every waiting part. */
  clear(): Part[] {
    const parts = [...this.open, ...this.staged.flatMap((b) => b.parts)];
    this.open.length = 0;
    this.staged.length = 0;
    this.openRows = this.stagedRows = 0;
    return parts;
  }
}
