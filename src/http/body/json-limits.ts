/**
 * Bounds on the shape of a JSON body, checked on the raw bytes before JSON.parse so a hostile
 * body costs a linear scan and nothing more: no deep recursion, no million-element arrays in
 * memory, no megabyte field names. Strings are skipped with `indexOf` (native memchr), so a
 * 20 MB data URL costs one jump. The scan does not validate JSON; JSON.parse does that after.
 *
 * Guarded by test/hardening-http.test.ts and the fuzz suite (test/fuzz/).
 */

export interface JsonLimits {
  /** Deepest nesting of arrays and objects (the body object is depth 1). */
  readonly maxDepth: number;
  /** Most items in one array, or members in one object. */
  readonly maxItems: number;
  /**
   * Longest string, in bytes, that is not a data URL; field names included. A string that
   * starts with `data:` is bounded by the body cap only (media inputs are sent that way).
   */
  readonly maxStringBytes: number;
}

export interface JsonLimitProblem {
  /** The top-level field where the limit was passed ('body' when outside any). */
  readonly param: string;
  readonly message: string;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const OPEN_OBJECT = 0x7b;
const CLOSE_OBJECT = 0x7d;
const OPEN_ARRAY = 0x5b;
const CLOSE_ARRAY = 0x5d;
const COMMA = 0x2c;
const DATA_PREFIX = Buffer.from('data:');

/** Index of the quote that closes the string whose opening quote is at `open`; -1 if none. */
function stringEnd(bytes: Buffer, open: number): number {
  let at = open + 1;
  for (;;) {
    const quote = bytes.indexOf(QUOTE, at);
    if (quote === -1) return -1;
    let slashes = 0;
    for (let back = quote - 1; back > open && bytes[back] === BACKSLASH; back -= 1) slashes += 1;
    if (slashes % 2 === 0) return quote;
    at = quote + 1;
  }
}

function topLevelName(bytes: Buffer, open: number, end: number): string {
  // Field names are short by the time they are used here (checked first); keep messages bounded.
  return bytes.toString('utf8', open + 1, Math.min(end, open + 1 + 64));
}

/** The top-level field whose name's quotes are at `open` and `end`; 'body' for -1 (outside any). */
function fieldName(bytes: Buffer, open: number, end: number): string {
  return open === -1 ? 'body' : topLevelName(bytes, open, end);
}

/** Returns the first limit the body passes, or undefined when it is within all of them. */
export function checkJsonLimits(bytes: Buffer, limits: JsonLimits): JsonLimitProblem | undefined {
  // For each open container: true for an object; and how many separators it has seen.
  const isObject: boolean[] = [];
  const items: number[] = [];
  let expectKey = false;
  // The top-level field the scan is in, as the offsets of its name's quotes (-1: 'body'): its
  // text is made only for a problem, not for each field of every body.
  let fieldOpen = -1;
  let fieldEnd = -1;
  for (let at = 0; at < bytes.length; at += 1) {
    const byte = bytes[at];
    if (byte === QUOTE) {
      const end = stringEnd(bytes, at);
      if (end === -1) return undefined; // unterminated: JSON.parse reports it
      const length = end - at - 1;
      const isKey = expectKey;
      if (isKey && isObject.length === 1) {
        fieldOpen = length <= limits.maxStringBytes ? at : -1;
        fieldEnd = end;
      }
      if (length > limits.maxStringBytes && (isKey || !bytes.subarray(at + 1, at + 1 + DATA_PREFIX.length).equals(DATA_PREFIX))) {
        return {
          param: isKey ? 'body' : fieldName(bytes, fieldOpen, fieldEnd),
          message: `a ${isKey ? 'field name' : 'string'} of ${length} bytes is longer than the limit of ${limits.maxStringBytes} bytes`,
        };
      }
      expectKey = false;
      at = end;
    } else if (byte === OPEN_OBJECT || byte === OPEN_ARRAY) {
      isObject.push(byte === OPEN_OBJECT);
      items.push(0);
      if (isObject.length > limits.maxDepth) {
        return { param: fieldName(bytes, fieldOpen, fieldEnd), message: `the body nests arrays and objects deeper than ${limits.maxDepth} levels` };
      }
      expectKey = byte === OPEN_OBJECT;
    } else if (byte === CLOSE_OBJECT || byte === CLOSE_ARRAY) {
      isObject.pop();
      items.pop();
      expectKey = false;
      if (isObject.length === 0) fieldOpen = -1;
    } else if (byte === COMMA) {
      const top = items.length - 1;
      if (top >= 0) {
        const count = (items[top] ?? 0) + 1;
        items[top] = count;
        if (count >= limits.maxItems) {
          const what = isObject[top] ? 'an object has more than' : 'an array has more than';
          return { param: isObject.length === 1 ? 'body' : fieldName(bytes, fieldOpen, fieldEnd), message: `${what} ${limits.maxItems} items` };
        }
        expectKey = isObject[top] === true;
      }
    }
  }
  return undefined;
}
