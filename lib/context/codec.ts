import { crc32 } from 'node:zlib';
import { decodeBlock, encodeBlock, encodeBound } from 'lz4';

/**
 * The binary format of cached values: a 12-byte header, then the payload.
 *
 * | offset | size | field                                        |
 * |-------:|-----:|----------------------------------------------|
 * | 0      | 2    | magic `0x43 0x58` ("CX")                     |
 * | 2      | 1    | format version ({@link FORMAT_VERSION})      |
 * | 3      | 1    | codec id ({@link Codec})                     |
 * | 4      | 4    | raw (uncompressed) length, u32 LE            |
 * | 8      | 4    | CRC-32 of the raw bytes, u32 LE              |
 *
 * The header lets the format change later (new codec ids, new versions) and lets a reader reject a
 * foreign or corrupted value instead of crashing. Compression uses the lz4 *block* API (the frame API is
 * about 500× slower to decode).
 */
export const HEADER_BYTES = 12;
/** Current format version (byte 2). */
export const FORMAT_VERSION = 1;
/** Largest raw value accepted, bytes (1 MiB): a corrupted length never makes us allocate more. */
export const MAX_RAW_BYTES = 1024 * 1024;

/** Codec ids (byte 3). */
export enum Codec {
  /** Payload stored as is (used when LZ4 would not make it smaller). */
  None = 0,
  /** LZ4 block. */
  Lz4Block = 1,
}

const MAGIC0 = 0x43;
const MAGIC1 = 0x58;

/** Why a value could not be decoded. */
export type DecodeFailure =
  | 'too_short'
  | 'bad_magic'
  | 'unknown_version'
  | 'unknown_codec'
  | 'bad_length'
  | 'corrupt_payload'
  | 'checksum_mismatch';

/** Result of {@link decodeFrame}: the raw bytes, or why they could not be recovered. */
export type DecodeResult =
  { readonly ok: true; readonly raw: Buffer } | { readonly ok: false; readonly reason: DecodeFailure };

/**
 * Frames raw bytes: LZ4 block when that is smaller, else stored as is.
 * @throws RangeError when `raw` exceeds {@link MAX_RAW_BYTES}.
 */
export function encodeFrame(raw: Buffer): Buffer {
  if (raw.length > MAX_RAW_BYTES) throw new RangeError(`value of ${raw.length} bytes exceeds ${MAX_RAW_BYTES}`);
  const out = Buffer.allocUnsafe(HEADER_BYTES + Math.max(encodeBound(raw.length), raw.length));
  let codec = Codec.Lz4Block;
  let n = raw.length === 0 ? 0 : encodeBlock(raw, out, HEADER_BYTES, out.length);
  if (n <= 0 || n >= raw.length) {
    codec = Codec.None;
    n = raw.copy(out, HEADER_BYTES);
  }
  out[0] = MAGIC0;
  out[1] = MAGIC1;
  out[2] = FORMAT_VERSION;
  out[3] = codec;
  out.writeUInt32LE(raw.length, 4);
  out.writeUInt32LE(crc32(raw), 8);
  return out.subarray(0, HEADER_BYTES + n);
}

/** Reads a frame back. Never throws: a foreign, truncated or corrupted value yields `{ ok: false }`. */
export function decodeFrame(frame: Buffer): DecodeResult {
  if (frame.length < HEADER_BYTES) return { ok: false, reason: 'too_short' };
  if (frame[0] !== MAGIC0 || frame[1] !== MAGIC1) return { ok: false, reason: 'bad_magic' };
  if (frame[2] !== FORMAT_VERSION) return { ok: false, reason: 'unknown_version' };
  const rawLength = frame.readUInt32LE(4);
  if (rawLength > MAX_RAW_BYTES) return { ok: false, reason: 'bad_length' };
  let raw: Buffer;
  switch (frame[3]) {
    case Codec.None:
      if (frame.length - HEADER_BYTES !== rawLength) return { ok: false, reason: 'bad_length' };
      raw = frame.subarray(HEADER_BYTES);
      break;
    case Codec.Lz4Block: {
      raw = Buffer.allocUnsafe(rawLength);
      const n = decodeBlock(frame, raw, HEADER_BYTES, frame.length);
      if (n !== rawLength) return { ok: false, reason: n < 0 ? 'corrupt_payload' : 'bad_length' };
      break;
    }
    default:
      return { ok: false, reason: 'unknown_codec' };
  }
  if (crc32(raw) !== frame.readUInt32LE(8)) return { ok: false, reason: 'checksum_mismatch' };
  return { ok: true, raw };
}
