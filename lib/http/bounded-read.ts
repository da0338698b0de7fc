/**
 * Reads a byte stream with a cap: bytes are counted as they arrive, and the read stops (the source is
 * cancelled or destroyed) as soon as the count passes the cap, so an oversize body or blob never sits
 * in memory. Optionally hashes (sha256) while reading, so a model's digest needs no second pass.
 */
import { createHash } from 'node:crypto';

/** What {@link readBounded} read. */
export interface BoundedRead {
  readonly bytes: Uint8Array;
  /** Lower-case hex sha256 of `bytes` (when asked for). */
  readonly sha256?: string;
}

/**
 * Reads `source` (a web `ReadableStream` or a Node `Readable`: both are async iterables) to the end,
 * or throws `tooLarge(seen)` as soon as more than `maxBytes` bytes arrived. Leaving the loop early
 * cancels a web stream and destroys a Node stream, so the rest is never read.
 * @param maxBytes the largest accepted size, bytes.
 * @param tooLarge the error to throw; receives the bytes seen so far (at most one chunk past the cap).
 * @param options.sha256 also compute the sha256 while reading; default false.
 */
export async function readBounded(
  source: AsyncIterable<Uint8Array | string>,
  maxBytes: number,
  tooLarge: (seenBytes: number) => Error,
  options: { readonly sha256?: boolean } = {},
): Promise<BoundedRead> {
  const hash = options.sha256 === true ? createHash('sha256') : undefined;
  const chunks: Uint8Array[] = [];
  let size = 0;
  for await (const part of source) {
    const chunk = typeof part === 'string' ? Buffer.from(part, 'utf8') : part;
    size += chunk.byteLength;
    if (size > maxBytes) throw tooLarge(size); // `for await` exit: the source is cancelled / destroyed
    hash?.update(chunk);
    chunks.push(chunk);
  }
  const bytes = chunks.length === 1 ? (chunks[0] as Uint8Array) : Buffer.concat(chunks, size);
  return hash === undefined ? { bytes } : { bytes, sha256: hash.digest('hex') };
}
