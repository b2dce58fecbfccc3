/**
 * The SDK's errors: a small class hierarchy, with one factory (`apiErrorFrom`) that turns an HTTP
 * error response of either family into the right class.
 *
 *   MediagateError
 *   ├── APIError                 the server answered with an error status (status, headers, body, code, param)
 *   │   ├── ValidationError      400 / 413 / 415 / 422: a parameter was refused (`code`, `param`)
 *   │   │   └── UnprocessableEntityError  422: e.g. `idempotency_key_reused` (the key was used with another body)
 *   │   ├── ConflictError        409: `task_not_cancellable`, `idempotency_key_in_use`
 *   │   ├── AuthenticationError  401: missing or invalid API key (a disabled or revoked one, an admin key on a client call)
 *   │   ├── BudgetExceededError  402: `budget_exceeded`, the key's budget cannot hold this task's maximum cost
 *   │   ├── PermissionDeniedError  403: `admin_key_required`, a client key on the admin API
 *   │   ├── NotFoundError        404: unknown task (or another key's task), model or route
 *   │   │   └── KeyNotFoundError 404: `key_not_found`, no such key on the admin API
 *   │   ├── RateLimitError       429: `retryAfter` seconds when the server said
 *   │   └── ServerError          5xx
 *   ├── ConnectionError          no HTTP response (refused, reset, DNS); `status` and `body` undefined
 *   │   ├── TimeoutError         no response within `timeout`
 *   │   └── StreamError          a task's event stream kept dropping or sent no task (waits then poll)
 *   ├── AbortError               the caller's AbortSignal fired; `taskId` when it happened while waiting
 *   ├── TaskFailedError          a task the SDK waited for ended `failed` or `cancelled`
 *   └── WebhookVerificationError a webhook delivery failed verification (`code`; webhook-signature.ts)
 */

import { isRecord } from './records.js';

/** The server's two error envelopes: `{error:{type,code,message,param}}` (video) and `{code,message,data:null}` (image). */
export interface ErrorFields {
  readonly type: string | undefined;
  readonly code: string;
  readonly message: string;
  readonly param: string;
}

export class MediagateError extends Error {
  override readonly name: string = 'MediagateError';
}

export interface APIErrorInit {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON when the body was JSON, else its text. */
  readonly body: unknown;
  readonly fields: ErrorFields;
}

export class APIError extends MediagateError {
  override readonly name: string = 'APIError';
  readonly status: number;
  readonly headers: Headers;
  readonly body: unknown;
  /** The server's error code (`unsupported_value`, `invalid_api_key`, `task_not_found`, ...); `''` when the body had none. */
  readonly code: string;
  /** The top-level request field at fault; `''` when none. */
  readonly param: string;
  /** The video family's error `type` (`invalid_request_error`, ...); undefined for the image family. */
  readonly type: string | undefined;
  /** The `x-request-id` of the response, to quote in a report. */
  readonly requestId: string | undefined;

  constructor(init: APIErrorInit) {
    super(init.fields.message);
    this.status = init.status;
    this.headers = init.headers;
    this.body = init.body;
    this.code = init.fields.code;
    this.param = init.fields.param;
    this.type = init.fields.type;
    this.requestId = init.headers.get('x-request-id') ?? undefined;
  }
}

export class ValidationError extends APIError {
  override readonly name: string = 'ValidationError';
}

/** 422: the request is well formed but cannot be processed, e.g. `idempotency_key_reused`. */
export class UnprocessableEntityError extends ValidationError {
  override readonly name: string = 'UnprocessableEntityError';
}

/** 409: `task_not_cancellable` (a completed or failed task), `idempotency_key_in_use` (the key's first request is still running). */
export class ConflictError extends APIError {
  override readonly name: string = 'ConflictError';
}

export class AuthenticationError extends APIError {
  override readonly name: string = 'AuthenticationError';
}

/**
 * 402 `budget_exceeded`: the key's spent + reserved + this task's maximum cost would pass its
 * budget. Nothing was created (an idempotency key was not taken); try again when the period
 * resets (`client.usage.retrieve()` says when) or the budget is raised. Never retried.
 */
export class BudgetExceededError extends APIError {
  override readonly name: string = 'BudgetExceededError';
}

/** 403 `admin_key_required`: the admin API was called with a client key. */
export class PermissionDeniedError extends APIError {
  override readonly name: string = 'PermissionDeniedError';
}

export class NotFoundError extends APIError {
  override readonly name: string = 'NotFoundError';
}

/** 404 `key_not_found` (param `id`): the admin API knows no such key (or it was revoked). */
export class KeyNotFoundError extends NotFoundError {
  override readonly name: string = 'KeyNotFoundError';
}

export class RateLimitError extends APIError {
  override readonly name: string = 'RateLimitError';
  /** Seconds to wait, from `Retry-After` (or `retry-after-ms`); undefined when the server did not say. */
  readonly retryAfter: number | undefined;

  constructor(init: APIErrorInit) {
    super(init);
    const ms = retryAfterMs(init.headers);
    this.retryAfter = ms === undefined ? undefined : ms / 1000;
  }
}

export class ServerError extends APIError {
  override readonly name: string = 'ServerError';
}

export class ConnectionError extends MediagateError {
  override readonly name: string = 'ConnectionError';
  /** No HTTP response was received. */
  readonly status: undefined = undefined;
  readonly body: undefined = undefined;
}

export class TimeoutError extends ConnectionError {
  override readonly name: string = 'TimeoutError';
}

/** A task's event stream dropped again and again, or sent something that is not a task. */
export class StreamError extends ConnectionError {
  override readonly name: string = 'StreamError';
}

export class AbortError extends MediagateError {
  override readonly name: string = 'AbortError';
  /** The task that was being waited for; it keeps running on the server. */
  readonly taskId: string | undefined;

  constructor(message: string, options: { cause?: unknown; taskId?: string } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.taskId = options.taskId;
  }
}

/** The final state of a task that did not complete; `task` is the family's task object. */
export class TaskFailedError<T = unknown> extends MediagateError {
  override readonly name: string = 'TaskFailedError';
  readonly taskId: string;
  readonly status: 'failed' | 'cancelled';
  /** The task's error code (`generation_failed`, `invalid_input`, ...); `''` when the family reports none (image tasks). */
  readonly code: string;
  readonly param: string;
  readonly task: T;

  constructor(init: { taskId: string; status: 'failed' | 'cancelled'; code: string; param: string; message: string; task: T }) {
    super(init.message);
    this.taskId = init.taskId;
    this.status = init.status;
    this.code = init.code;
    this.param = init.param;
    this.task = init.task;
  }
}

const text = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Reads either family's error envelope; falls back to the status line. */
export function errorFields(status: number, body: unknown): ErrorFields {
  if (isRecord(body) && isRecord(body['error'])) {
    const error = body['error'];
    return {
      type: text(error['type']),
      code: text(error['code']) ?? '',
      message: text(error['message']) ?? `HTTP ${status}`,
      param: text(error['param']) ?? '',
    };
  }
  if (isRecord(body) && typeof body['code'] === 'string') {
    return { type: undefined, code: body['code'], message: text(body['message']) ?? `HTTP ${status}`, param: text(body['param']) ?? '' };
  }
  const snippet = typeof body === 'string' && body.trim() !== '' ? `: ${body.trim().slice(0, 200)}` : '';
  return { type: undefined, code: '', message: `HTTP ${status}${snippet}`, param: '' };
}

/** The one factory: an error response -> the class for its kind. */
export function apiErrorFrom(status: number, headers: Headers, body: unknown): APIError {
  const init: APIErrorInit = { status, headers, body, fields: errorFields(status, body) };
  if (status === 422) return new UnprocessableEntityError(init);
  if (status === 400 || status === 413 || status === 415) return new ValidationError(init);
  if (status === 409) return new ConflictError(init);
  if (status === 401) return new AuthenticationError(init);
  if (status === 402) return new BudgetExceededError(init);
  if (status === 403) return new PermissionDeniedError(init);
  if (status === 404) return init.fields.code === 'key_not_found' ? new KeyNotFoundError(init) : new NotFoundError(init);
  if (status === 429) return new RateLimitError(init);
  if (status >= 500) return new ServerError(init);
  return new APIError(init);
}

/**
 * Milliseconds the server asked to wait: `retry-after-ms`, else `Retry-After` as seconds or as
 * an HTTP date. Undefined when absent or unreadable.
 */
export function retryAfterMs(headers: Headers, now: number = Date.now()): number | undefined {
  const ms = headers.get('retry-after-ms');
  if (ms !== null && ms.trim() !== '' && Number.isFinite(Number(ms)) && Number(ms) >= 0) return Number(ms);
  const value = headers.get('retry-after');
  if (value === null || value.trim() === '') return undefined;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return seconds >= 0 ? seconds * 1000 : undefined;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}
