/**
 * @module A nesting limit for JSON bodies, enforced on the raw bytes before `JSON.parse`:
 * one linear pass counting `[`/`{` depth outside strings, no recursion, so a body of
 * `[[[[…` a million deep costs one scan of its bytes and a 400 instead of a stack
 * overflow (or seconds of `Array.flat`) further on.
 */

/** Deepest nesting any Switchyard request needs is 5 (`{inputs:[{data:[[…]]}]}`); room for parameters. */
export const MAX_JSON_DEPTH = 32;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_ARRAY = 0x5b;
const OPEN_OBJECT = 0x7b;
const CLOSE_ARRAY = 0x5d;
const CLOSE_OBJECT = 0x7d;

/**
 * Byte offset where the nesting of `bytes` (UTF-8 JSON) first exceeds `maxDepth`, or -1.
 * Brackets inside strings do not count (escapes are honoured); malformed JSON is left
 * to `JSON.parse`. UTF-8 continuation bytes are all ≥ 0x80, so scanning bytes is exact.
 */
export function jsonDepthExceeded(bytes: Uint8Array, maxDepth: number): number {
  let depth = 0;
  let inString = false;
  for (let i = 0; i < bytes.length; i++) {
    const b = bytes[i]!;
    if (inString) {
      if (b === BACKSLASH) i++;
      else if (b === QUOTE) inString = false;
    } else if (b === QUOTE) {
      inString = true;
    } else if (b === OPEN_ARRAY || b === OPEN_OBJECT) {
      if (++depth > maxDepth) return i;
    } else if (b === CLOSE_ARRAY || b === CLOSE_OBJECT) {
      depth--;
    }
  }
  return -1;
}

/** The 400 message for a body nested deeper than `maxDepth` at byte `offset`. */
export function jsonTooDeepMessage(maxDepth: number, offset: number): string {
  return `body nests JSON deeper than ${maxDepth} levels (the limit) at byte ${offset}`;
}
