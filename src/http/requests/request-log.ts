/** The log field that carries the request id (Fastify's default `requestIdLogLabel`). */
export const REQUEST_ID_LOG_LABEL = 'reqId';

/** The two levels a request's line is written at (a pino logger or a Fastify request's). */
export interface LineLogger {
  error(fields: object, msg: string): void;
  debug(fields: object, msg: string): void;
}

/**
 * The one line a request gets, whoever answered it: an error line for a 5xx, and at debug level
 * a line for every request (Fastify's own two lines per request are off).
 */
export function logResponse(log: LineLogger, debug: boolean, method: string, url: string, status: number, ms: number): void {
  if (status >= 500) log.error({ status, url: url.split('?')[0] }, 'request failed');
  else if (debug) log.debug({ status, method, url: url.split('?')[0], ms }, 'request');
}
