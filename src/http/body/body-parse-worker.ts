import { parentPort } from 'node:worker_threads';
import type { JsonLimits } from './json-limits.js';
import { parseJsonBody } from './json-body.js';

/** A worker thread of body-parser-pool.ts: parses the bodies it is sent, one at a time. */
export interface ParseRequest {
  readonly id: number;
  readonly bytes: Uint8Array;
  readonly limits: JsonLimits | undefined;
}

parentPort?.on('message', (request: ParseRequest) => {
  parentPort?.postMessage({ id: request.id, result: parseJsonBody(request.bytes, request.limits, true) });
});
