/** Types for the block API of the `lz4` package (0.6.x), the only part this project uses. */
declare module 'lz4' {
  /** Upper bound of the compressed size of `inputLength` bytes. */
  export function encodeBound(inputLength: number): number;
  /**
   * Compresses `input` into `output[startIdx, endIdx)`.
   * @returns compressed bytes written; 0 when they do not fit.
   */
  export function encodeBlock(input: Buffer, output: Buffer, startIdx?: number, endIdx?: number): number;
  /**
   * Decompresses `input[startIdx, endIdx)` into `output`.
   * @returns bytes written; negative when the input is malformed.
   */
  export function decodeBlock(input: Buffer, output: Buffer, startIdx?: number, endIdx?: number): number;
}
