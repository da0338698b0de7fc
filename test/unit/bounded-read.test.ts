import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { Readable } from 'node:stream';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { AppError } from '../../lib/errors/errors';
import { readBounded } from '../../lib/http/bounded-read';
import { readJsonBody } from '../../lib/http/http-io';

const CHUNK = 1024;

/**
 * A huge chunked body (16 MiB, ends so that a reader without a cap fails the size assertion instead of
 * hanging): counts what was pulled and whether it was cancelled.
 */
function endlessBody(): { stream: ReadableStream<Uint8Array>; pulled: () => number; cancelled: () => boolean } {
  let pulled = 0;
  let cancelled = false;
  const chunk = new TextEncoder().encode('['.repeat(CHUNK));
  const stream = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled >= 16 * 1024 * 1024) return controller.close();
      pulled += chunk.byteLength;
      controller.enqueue(chunk);
    },
    cancel() {
      cancelled = true;
    },
  });
  return { stream, pulled: () => pulled, cancelled: () => cancelled };
}

const tooLarge = (e: unknown): boolean => e instanceof AppError && e.code === 'payload_too_large' && e.status === 413;

describe('bounded reads', () => {
  it('refuses an endless chunked JSON body as soon as the cap is passed, and cancels the stream', async () => {
    const body = endlessBody();
    const request = new Request('http://localhost/api/score', {
      method: 'POST',
      headers: { 'content-type': 'application/json' }, // no content-length: chunked
      body: body.stream,
      duplex: 'half',
    } as RequestInit);
    const limit = 64 * 1024;
    await assert.rejects(readJsonBody(request, limit), tooLarge);
    assert.ok(body.pulled() <= limit + 4 * CHUNK, `read ${body.pulled()} bytes for a ${limit}-byte cap`);
    assert.ok(body.cancelled(), 'the body stream must be cancelled');
  });

  it('refuses a declared content-length over the cap without reading the body', async () => {
    const body = endlessBody();
    const request = {
      headers: new Headers({ 'content-type': 'application/json', 'content-length': String(10 * 1024 * 1024) }),
      body: body.stream,
    };
    await assert.rejects(readJsonBody(request as never, 1024), tooLarge);
    assert.equal(body.pulled() <= CHUNK, true, 'at most the stream’s own first pull');
  });

  it('reads a chunked body under the cap', async () => {
    const text = JSON.stringify({ a: 'x'.repeat(3000) });
    const parts = text.match(/.{1,700}/gs) ?? [];
    const request = new Request('http://localhost/', {
      method: 'POST',
      headers: { 'content-type': 'application/json' },
      body: Readable.toWeb(Readable.from(parts.map((p) => Buffer.from(p)))) as ReadableStream<Uint8Array>,
      duplex: 'half',
    } as RequestInit);
    assert.deepEqual(await readJsonBody(request, text.length), JSON.parse(text));
  });

  it('stops a Node stream past the cap and destroys it (the rest is never produced)', async () => {
    let produced = 0;
    let finished = false;
    const source = Readable.from(
      (function* () {
        try {
          for (;;) {
            produced += CHUNK;
            yield Buffer.alloc(CHUNK, 1);
          }
        } finally {
          finished = true;
        }
      })(),
    );
    await assert.rejects(
      readBounded(source, 10 * CHUNK, (n) => new Error(`over: ${n}`)),
      /over: 11264/,
    );
    assert.ok(produced <= 14 * CHUNK, `produced ${produced} bytes for a ${10 * CHUNK}-byte cap`);
    assert.ok(finished && source.destroyed, 'the source must be destroyed');
  });

  it('returns exactly the bytes and their sha256, however the stream is chunked; refuses one byte over', async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(fc.uint8Array({ maxLength: 300 }), { maxLength: 20 }), async (chunks) => {
        const all = Buffer.concat(chunks);
        const sha = createHash('sha256').update(all).digest('hex');
        const r = await readBounded(
          Readable.from(chunks.map((c) => Buffer.from(c))),
          all.length,
          () => new Error('x'),
          {
            sha256: true,
          },
        );
        assert.deepEqual(Buffer.from(r.bytes), all);
        assert.equal(r.sha256, sha);
        if (all.length > 0)
          await assert.rejects(
            readBounded(Readable.from(chunks.map((c) => Buffer.from(c))), all.length - 1, () => new Error('cap')),
            /cap/,
          );
      }),
      { numRuns: 100 },
    );
  });
});
