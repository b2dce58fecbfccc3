import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Request ids accepted from clients: they end up in logs and headers. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Random bytes drawn at once and handed out 12 at a time: one syscall per ~340 requests. */
const POOL_BYTES = 4096;
const ID_BYTES = 12;

/**
 * The id of each request (the `x-request-id` header, and every log line of the request): the
 * client's own when it is a short, plain token, else 96 random bits. Not a counter: a counter
 * tells any client how many requests others made between two of its own. One generator serves
 * the framework and the status fast path.
 */
export function createRequestIds(): (req: IncomingMessage) => string {
  let pool = randomBytes(POOL_BYTES);
  let offset = 0;
  return (req) => {
    const given = req.headers['x-request-id'];
    if (typeof given === 'string' && SAFE_REQUEST_ID.test(given)) return given;
    if (offset + ID_BYTES > pool.length) {
      pool = randomBytes(POOL_BYTES);
      offset = 0;
    }
    const id = pool.toString('base64url', offset, offset + ID_BYTES);
    offset += ID_BYTES;
    return id;
  };
}
