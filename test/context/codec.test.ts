import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import fc from 'fast-check';
import { Codec, decodeFrame, encodeFrame, HEADER_BYTES } from '../../lib/context/codec';
import { decodeContext, encodeContext } from '../../lib/context/context-value';
import { syntheticProfile } from '../../lib/context/synthetic-profiles';

const jsonish = fc.oneof(
  fc.uint8Array({ maxLength: 4096 }).map((a) => Buffer.from(a)),
  fc.json({ maxDepth: 4 }).map((s) => Buffer.from(s)),
  fc.string({ maxLength: 200 }).map((s) => Buffer.from(s.repeat(8))),
);

describe('codec: LZ4 block + versioned header', () => {
  it('round-trips any bytes (property)', () => {
    fc.assert(
      fc.property(jsonish, (raw) => {
        const frame = encodeFrame(raw);
        const r = decodeFrame(frame);
        assert.ok(r.ok);
        assert.ok(r.raw.equals(raw));
        assert.ok(frame.length <= HEADER_BYTES + raw.length, 'never larger than stored as is');
      }),
      { numRuns: 300 },
    );
  });

  it('round-trips cached contexts (property)', () => {
    fc.assert(
      fc.property(fc.nat(1_000_000), fc.boolean(), fc.integer({ min: 0, max: 2 ** 42 }), (i, none, at) => {
        const value = { profile: none ? null : syntheticProfile(i) };
        const r = decodeContext(encodeContext(value, at));
        assert.ok(r.ok);
        assert.deepEqual(r.stored, { value, storedAt: at });
      }),
    );
  });

  it('compresses repetitive JSON with the LZ4 block codec, and stores incompressible bytes as is', () => {
    const text = Buffer.from(
      JSON.stringify(Array.from({ length: 50 }, (_, i) => ({ merchantId: 'm-991', amount: i, country: 'FR' }))),
    );
    const frame = encodeFrame(text);
    assert.equal(frame[3], Codec.Lz4Block);
    assert.ok(frame.length < text.length / 3);
    const noise = Buffer.from(Array.from({ length: 64 }, (_, i) => (i * 137 + 11) % 256));
    assert.equal(encodeFrame(noise)[3], Codec.None);
  });

  it('rejects foreign values by their header', () => {
    const good = encodeFrame(Buffer.from('{"s":1,"p":null}'.repeat(4)));
    const variants: [string, Buffer][] = [
      ['empty', Buffer.alloc(0)],
      ['plain JSON', Buffer.from('{"s":1,"p":null}')],
      ['short', good.subarray(0, 5)],
      ['other magic', Buffer.concat([Buffer.from('XX'), good.subarray(2)])],
      ['future version', Buffer.from(good).fill(9, 2, 3)],
      ['unknown codec', Buffer.from(good).fill(7, 3, 4)],
      [
        'absurd length',
        (() => {
          const b = Buffer.from(good);
          b.writeUInt32LE(0xffffffff, 4);
          return b;
        })(),
      ],
    ];
    for (const [name, frame] of variants) assert.equal(decodeFrame(frame).ok, false, name);
  });

  it('never crashes on a corrupted value and never returns other bytes as the value (property)', () => {
    fc.assert(
      fc.property(jsonish, fc.nat(), fc.integer({ min: 1, max: 255 }), (raw, pos, mask) => {
        const frame = Buffer.from(encodeFrame(raw));
        const i = pos % frame.length;
        frame[i] = (frame[i] as number) ^ mask;
        const r = decodeFrame(frame);
        assert.ok(!r.ok || r.raw.equals(raw));
      }),
      { numRuns: 500 },
    );
    fc.assert(
      fc.property(fc.uint8Array({ maxLength: 512 }), (bytes) => {
        const r = decodeContext(Buffer.from(bytes));
        assert.equal(r.ok, false);
      }),
    );
  });

  it('rejects a valid frame whose JSON is not a cached context', () => {
    for (const text of ['not json', '[]', '{"s":"x","p":null}', '{"s":1,"p":{"homeCountry":"FR"}}']) {
      assert.equal(decodeContext(encodeFrame(Buffer.from(text))).ok, false, text);
    }
  });
});
