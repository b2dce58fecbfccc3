import { checkMediaString, type MediaStringCheck } from '../../media/data-url.js';
import { checkJsonLimits, type JsonLimits } from './json-limits.js';

/**
 * A JSON request body from its bytes to a value: the shape bounds on the raw bytes, strict
 * UTF-8, JSON.parse. The same steps run on the event loop for small bodies and in a worker
 * thread for large ones (body-parser-pool.ts), so both give the same answer to the same bytes.
 * Plain data in and out: a worker posts the result back as it is.
 */
export type JsonBodyResult =
  | {
      readonly ok: true;
      readonly body: unknown;
      /**
       * Only from a worker: for each data-URL string of the body, in `dataUrlStrings` order,
       * its `checkMediaString` verdict, so validation does not scan it again.
       */
      readonly dataUrls?: readonly MediaStringCheck[];
    }
  | { readonly ok: false; readonly problem: 'shape'; readonly param: string; readonly message: string }
  | { readonly ok: false; readonly problem: 'utf8' }
  | { readonly ok: false; readonly problem: 'json'; readonly message: string }
  /** The worker thread parsing it stopped (body-parser-pool.ts): a fault of the server, not of the body. */
  | { readonly ok: false; readonly problem: 'lost' };

const UTF8 = new TextDecoder('utf-8', { fatal: true, ignoreBOM: true });

/** `checkMedia`: also check every data-URL string (the worker does; the event loop leaves it to validation). */
export function parseJsonBody(bytes: Uint8Array, limits: JsonLimits | undefined, checkMedia: boolean): JsonBodyResult {
  // Shape bounds first, on the bytes: a hostile body is refused before it costs a parse.
  const problem = limits ? checkJsonLimits(Buffer.isBuffer(bytes) ? bytes : Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), limits) : undefined;
  if (problem) return { ok: false, problem: 'shape', param: problem.param, message: problem.message };
  let text: string;
  try {
    // JSON is UTF-8 (RFC 8259); invalid bytes are an error, not silently replaced.
    text = UTF8.decode(bytes);
  } catch {
    return { ok: false, problem: 'utf8' };
  }
  let body: unknown;
  try {
    body = JSON.parse(text) as unknown;
  } catch (error) {
    return { ok: false, problem: 'json', message: error instanceof Error ? error.message : 'parse error' };
  }
  if (!checkMedia) return { ok: true, body };
  return { ok: true, body, dataUrls: dataUrlStrings(body).map(checkMediaString) };
}

/**
 * The strings of `value` that start as a data URL, depth first in key order: a worker and the
 * event loop walking the same body (a structured clone keeps the order) list the same strings.
 * The walk is bounded by the body's shape limits, already checked.
 */
export function dataUrlStrings(value: unknown, found: string[] = []): string[] {
  if (typeof value === 'string') {
    if (value.startsWith('data:') || value.startsWith('DATA:')) found.push(value);
  } else if (Array.isArray(value)) {
    for (const item of value as unknown[]) dataUrlStrings(item, found);
  } else if (typeof value === 'object' && value !== null) {
    for (const item of Object.values(value)) dataUrlStrings(item, found);
  }
  return found;
}
