/** The header that carries a request's id (also in every log line of the request). */
export const REQUEST_ID_HEADER = 'x-request-id';

/**
 * Headers on every response, whoever answers it (the router's onRequest hook or the status
 * fast path in dispatch.ts); routes add their own beside these.
 */
export function defaultHeaders(requestId: string): Record<string, string | number> {
  return { [REQUEST_ID_HEADER]: requestId, 'x-content-type-options': 'nosniff' };
}
