import { randomBytes } from 'node:crypto';
import type { IncomingMessage } from 'node:http';

/** Request ids accepted from clients: they end up in logs and headers. */
const SAFE_REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/**
 * The id of each request (the `x-request-id` header, and every log line of the request): the
 * client's own when it is a short, plain token, else a per-process random prefix and a
 * counter, unique across processes with no entropy drawn per request. One generator serves
 * the framework and the status fast path, so ids never repeat between them.
 */
export function createRequestIds(): (req: IncomingMessage) => string {
  const prefix = `${randomBytes(4).toString('hex')}-`;
  let counter = 0;
  return (req) => {
    const given = req.headers['x-request-id'];
    return typeof given === 'string' && SAFE_REQUEST_ID.test(given) ? given : `${prefix}${(counter += 1).toString(36)}`;
  };
}
