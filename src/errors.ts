/**
 * The catalogue of errors the API can return. Every error is a value with a stable `code`, an
 * HTTP status, the `param` at fault ('' when none) and a message; wire/envelopes.ts is the one
 * place that turns it into the video or image family's body. Tests assert codes and params,
 * never message prose.
 */

import type { TaskFailureCode } from './failure-codes.js';

export type ValidationCode = 'missing_parameter' | 'invalid_parameter' | 'unsupported_parameter' | 'unsupported_value';

export type ErrorCode =
  | ValidationCode
  | 'task_not_found'
  | 'task_not_cancellable'
  | 'idempotency_key_reused'
  | 'idempotency_key_in_use'
  | 'webhook_not_found'
  | 'webhook_delivery_not_found'
  | 'webhook_limit_reached'
  | 'invalid_api_key'
  | 'admin_key_required'
  | 'key_not_found'
  | 'rate_limit_exceeded'
  | 'budget_exceeded'
  | 'not_found'
  | 'method_not_allowed'
  | 'invalid_signature'
  | 'internal_error'
  // A dependency (the database, the media store) is unreachable: retry after Retry-After.
  | 'service_unavailable'
  // Connection-level limits (http/server/connection-limits.ts) and expired output URLs.
  | 'url_expired'
  | 'request_timeout'
  | 'headers_too_large'
  // The OpenAI-compatible front doors (src/frontdoors/): content before completion, a held
  // request whose task outlived the wait, and a task's own failure (or cancel) told synchronously.
  | 'video_not_ready'
  | 'wait_timeout'
  | 'cancelled'
  | TaskFailureCode;

/** The `type` field of the video family's error object. */
export type ErrorType =
  'invalid_request_error' | 'authentication_error' | 'permission_error' | 'rate_limit_error' | 'billing_error' | 'server_error' | 'generation_error';

/** The most characters of a client's own text (a field name, a value, a path) an answer repeats. */
export const ECHO_MAX_CHARS = 200;
/** A message never grows past this, whatever it repeats (the fixed words of any message are far shorter). */
const MESSAGE_MAX_CHARS = 2000;

/**
 * A client's text as an answer repeats it: at most `max` characters, then an ellipsis. A body
 * may be 32 MiB; a field name of 1 MiB must not make an answer of 2 MiB (in `message` and
 * `param`). A cut never splits a surrogate pair.
 */
export function echo(text: string, max = ECHO_MAX_CHARS): string {
  if (text.length <= max) return text;
  const end = /[\ud800-\udbff]/.test(text.charAt(max - 1)) ? max - 1 : max;
  return `${text.slice(0, end)}…`;
}

export class ApiError extends Error {
  override readonly name = 'ApiError';
  /** The field at fault; cut like any echoed text (it may be a client's field name). */
  readonly param: string;
  constructor(
    readonly status: number,
    readonly code: ErrorCode,
    param: string,
    message: string,
    readonly type: ErrorType = 'invalid_request_error',
    options?: { cause?: unknown; headers?: Readonly<Record<string, string>> },
  ) {
    // The one place every answer's error passes: whatever a message repeats, it stays bounded.
    super(echo(message, MESSAGE_MAX_CHARS), options?.cause === undefined ? undefined : { cause: options.cause });
    this.param = echo(param);
    this.headers = options?.headers ?? {};
  }
  readonly headers: Readonly<Record<string, string>>;
}

/** A 400 validation error, the only kind the catalog produces. */
export function validationError(code: ValidationCode, param: string, message: string): ApiError {
  return new ApiError(400, code, param, message);
}

export const errors = {
  taskNotFound: (id: string) => new ApiError(404, 'task_not_found', 'task_id', `No task with id '${id.slice(0, 64)}' exists for this API key.`),
  taskNotCancellable: (id: string, status: string) =>
    new ApiError(409, 'task_not_cancellable', 'task_id', `Task '${id.slice(0, 64)}' is ${status} and can no longer be cancelled.`),
  invalidIdempotencyKey: () => new ApiError(400, 'invalid_parameter', 'Idempotency-Key', 'Idempotency-Key must be 1-255 printable ASCII characters.'),
  idempotencyKeyReused: () =>
    new ApiError(422, 'idempotency_key_reused', 'Idempotency-Key', 'This Idempotency-Key was already used with a different request in the last 24 hours.'),
  idempotencyKeyInUse: () =>
    new ApiError(409, 'idempotency_key_in_use', 'Idempotency-Key', 'A request with this Idempotency-Key is still being processed; retry later.'),
  webhookNotFound: (id: string) =>
    new ApiError(404, 'webhook_not_found', 'webhook_id', `No webhook endpoint with id '${id.slice(0, 64)}' exists for this API key.`),
  webhookDeliveryNotFound: (id: string) =>
    new ApiError(404, 'webhook_delivery_not_found', 'delivery_id', `No delivery with id '${id.slice(0, 64)}' exists for this webhook endpoint.`),
  webhookLimitReached: (limit: number) =>
    new ApiError(409, 'webhook_limit_reached', 'url', `This API key has ${limit} webhook endpoints, the most it may have; remove one first.`),
  invalidQuery: (param: string, message: string) => new ApiError(400, 'invalid_parameter', param, message),
  unsupportedQueryValue: (param: string, message: string) => new ApiError(400, 'unsupported_value', param, message),
  invalidApiKey: (message: string) => new ApiError(401, 'invalid_api_key', 'Authorization', message, 'authentication_error'),
  adminKeyRequired: () =>
    new ApiError(
      403,
      'admin_key_required',
      'Authorization',
      'This operation needs an admin key (MEDIAGATE_ADMIN_KEYS or `mediagate keys create --admin`).',
      'permission_error',
    ),
  keyNotFound: (id: string) => new ApiError(404, 'key_not_found', 'id', `No API key with id '${id.slice(0, 64)}' exists.`),
  notFound: (method: string, url: string) => new ApiError(404, 'not_found', '', `No route for ${method} ${url.split('?')[0]?.slice(0, 200) ?? ''}.`),
  methodNotAllowed: (method: string, allow: readonly string[]) =>
    new ApiError(405, 'method_not_allowed', '', `Method ${method} is not allowed here; use ${allow.join(', ')}.`, 'invalid_request_error', {
      headers: { allow: allow.join(', ') },
    }),
  bodyTooLarge: (limit: number) => new ApiError(413, 'invalid_parameter', 'body', `The request body is larger than the limit of ${limit} bytes.`),
  inputBytesOverLimit: (bytes: number, limit: number) =>
    new ApiError(
      413,
      'invalid_parameter',
      'body',
      `The request's media inputs are ${bytes} bytes decoded; an API key may hold at most ${limit} bytes of inputs.`,
    ),
  unsupportedMediaType: (got: string | undefined) =>
    new ApiError(415, 'invalid_parameter', 'Content-Type', `Content-Type must be application/json${got ? `; got '${got.slice(0, 100)}'` : ' and is missing'}.`),
  malformedJson: (detail: string) => new ApiError(400, 'invalid_parameter', 'body', `The request body is not valid JSON: ${detail}`),
  bodyShapeLimit: (param: string, message: string) => new ApiError(400, 'invalid_parameter', param, `The request body is too complex: ${message}.`),
  rateLimited: (message: string, headers: Readonly<Record<string, string>>) =>
    new ApiError(429, 'rate_limit_exceeded', '', message, 'rate_limit_error', { headers }),
  budgetExceeded: (message: string) => new ApiError(402, 'budget_exceeded', '', message, 'billing_error'),
  invalidSignature: () => new ApiError(403, 'invalid_signature', 'sig', 'The file URL has an invalid signature or has expired.'),
  urlExpired: () =>
    new ApiError(
      403,
      'url_expired',
      'exp',
      "The file URL has expired: a file is kept until its URL's expiry and the URL never changes, so create the task again for a new file.",
    ),
  requestTimeout: () => new ApiError(408, 'request_timeout', '', 'The request did not arrive within the server timeout.'),
  headersTooLarge: (limit: number) => new ApiError(431, 'headers_too_large', '', `The request headers are larger than the limit of ${limit} bytes.`),
  fileGone: () => new ApiError(404, 'not_found', '', 'The file no longer exists.'),
  assetNotFound: (name: string) => new ApiError(404, 'not_found', 'name', `No asset named ${name.slice(0, 100)}.`),
  serviceUnavailable: (dependency: 'database' | 'storage', retryAfterS: number, cause?: unknown) =>
    new ApiError(
      503,
      'service_unavailable',
      '',
      `The ${dependency === 'database' ? 'database' : 'media store'} is unreachable for now; retry after ${retryAfterS} seconds (a create with the same Idempotency-Key).`,
      'server_error',
      { cause, headers: { 'retry-after': String(retryAfterS) } },
    ),
  internal: (cause: unknown) => new ApiError(500, 'internal_error', '', 'An unexpected error occurred; it has been logged.', 'server_error', { cause }),
} as const;
