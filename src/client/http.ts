import { AbortError, APIError, ConnectionError, MediagateError, TimeoutError, apiErrorFrom, errorFields, retryAfterMs } from './errors.js';
import type { RequestOptions } from './types.js';

/** Any fetch with the standard signature; `globalThis.fetch` by default. */
export type Fetch = (url: string, init: RequestInit) => Promise<Response>;

/** Client options after defaults and environment variables were applied, once. */
export interface ResolvedClientOptions {
  readonly baseURL: string;
  readonly apiKey: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly fetch: Fetch;
  readonly defaultHeaders: Readonly<Record<string, string>>;
}

export interface RequestSpec {
  readonly method: 'GET' | 'POST' | 'PATCH' | 'DELETE';
  /** Path under the base URL, starting with `/`. */
  readonly path: string;
  readonly body?: object;
  /**
   * Whether sending the request twice is harmless. Reads are retried on 429, 408, 5xx and
   * connection errors; a create only when the server cannot have acted on it: on 429, and on a
   * connection that was never established (refused, DNS). A create that timed out, was reset or got
   * a 5xx is not retried, since it may have created a task.
   */
  readonly idempotent: boolean;
  /**
   * Sent as `Idempotency-Key` on a create. With a key the server answers a repeat with the first
   * task instead of making a second, so the create is retried like a read (5xx, broken
   * connections), and also on 409 `idempotency_key_in_use` (the first attempt still running).
   */
  readonly idempotencyKey?: string;
  /** Query parameters; undefined values are left out. */
  readonly query?: Readonly<Record<string, string | number | undefined>>;
}

export interface HttpResult {
  readonly status: number;
  readonly headers: Headers;
  /** Parsed JSON, the raw text when it is not JSON, undefined when empty. */
  readonly body: unknown;
}

const INITIAL_RETRY_MS = 500;
const MAX_RETRY_MS = 8_000;
/** A `Retry-After` longer than this is not honoured by an automatic retry; the error is thrown instead. */
const MAX_HONOURED_RETRY_AFTER_MS = 60_000;

/** Error codes meaning the connection was never made, so the server cannot have seen the request. */
const NOT_SENT_CODES = new Set(['ECONNREFUSED', 'ENOTFOUND', 'EAI_AGAIN', 'ENETUNREACH', 'EHOSTUNREACH', 'UND_ERR_CONNECT_TIMEOUT']);

function errorCodes(error: unknown): string[] {
  const codes: string[] = [];
  let current: unknown = error;
  for (let depth = 0; depth < 5 && typeof current === 'object' && current !== null; depth++) {
    if ('code' in current && typeof current.code === 'string') codes.push(current.code);
    if (current instanceof AggregateError) for (const inner of current.errors) codes.push(...errorCodes(inner));
    current = 'cause' in current ? current.cause : undefined;
  }
  return codes;
}

function neverSent(error: ConnectionError): boolean {
  return !(error instanceof TimeoutError) && errorCodes(error.cause).some((code) => NOT_SENT_CODES.has(code));
}

/** The innermost message of a fetch failure (`fetch failed` says little; its cause says `connect ECONNREFUSED ...`). */
function describeCause(error: unknown): string {
  let message = error instanceof Error ? error.message : String(error);
  let current: unknown = error;
  for (let depth = 0; depth < 5 && current instanceof Error; depth++) {
    if (current.message !== '') message = current.message;
    current = current.cause;
  }
  return message;
}

/** Resolves after `ms`, or rejects with an AbortError when `signal` fires first. */
export function sleep(ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted) {
      reject(new AbortError('Aborted.', { cause: signal.reason }));
      return;
    }
    const onAbort = (): void => {
      clearTimeout(timer);
      reject(new AbortError('Aborted.', { cause: signal?.reason }));
    };
    const timer = setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** Delay before retry number `attempt` (0-based): the server's `Retry-After` when given, else exponential backoff with jitter. */
export function retryDelayMs(attempt: number, headers?: Headers): number {
  const hinted = headers ? retryAfterMs(headers) : undefined;
  if (hinted !== undefined && hinted <= MAX_HONOURED_RETRY_AFTER_MS) return hinted;
  const base = Math.min(INITIAL_RETRY_MS * 2 ** attempt, MAX_RETRY_MS);
  return base * (0.75 + Math.random() * 0.25);
}

function retryableStatus(result: HttpResult, spec: RequestSpec): boolean {
  const { status, headers } = result;
  if (status === 429) {
    const hinted = retryAfterMs(headers);
    return hinted === undefined || hinted <= MAX_HONOURED_RETRY_AFTER_MS;
  }
  if (status === 409 && spec.idempotencyKey !== undefined) return errorFields(status, result.body).code === 'idempotency_key_in_use';
  return retries(spec) && (status === 408 || status >= 500);
}

/** Whether a repeat of this request is harmless: a read, or a create that carries an idempotency key. */
const retries = (spec: RequestSpec): boolean => spec.idempotent || spec.idempotencyKey !== undefined;

/** 1-255 printable ASCII characters (decisions §8.4); checked before sending so a typo is not a round trip. */
export function checkIdempotencyKey(key: string): string {
  if (!/^[\x20-\x7e]{1,255}$/.test(key)) {
    throw new MediagateError('idempotencyKey must be 1-255 printable ASCII characters.');
  }
  return key;
}

function withQuery(path: string, query: RequestSpec['query']): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [name, value] of Object.entries(query)) if (value !== undefined) params.set(name, String(value));
  const text = params.toString();
  return text === '' ? path : `${path}?${text}`;
}

function parseBody(text: string): unknown {
  if (text === '') return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return text;
  }
}

const newRequestId = (): string => `mgc_${globalThis.crypto.randomUUID()}`;

/** Sends requests: headers, per-attempt timeout, cancellation, retries, typed errors. */
export class HttpCore {
  // Private, so that logging a client never prints its API key.
  readonly #options: ResolvedClientOptions;

  constructor(options: ResolvedClientOptions) {
    this.#options = options;
  }

  /** The headers of every request: defaults, the caller's, then the key and the idempotency key. */
  headers(spec: RequestSpec, options: RequestOptions, accept: string): Record<string, string> {
    const headers: Record<string, string> = {
      accept,
      'user-agent': 'mediagate-client',
      'x-request-id': newRequestId(),
      ...this.#options.defaultHeaders,
      ...options.headers,
      authorization: `Bearer ${this.#options.apiKey}`,
    };
    if (spec.idempotencyKey !== undefined) headers['idempotency-key'] = checkIdempotencyKey(spec.idempotencyKey);
    if (spec.body !== undefined) headers['content-type'] = 'application/json';
    return headers;
  }

  url(spec: RequestSpec): string {
    return `${this.#options.baseURL}${withQuery(spec.path, spec.query)}`;
  }

  get timeout(): number {
    return this.#options.timeout;
  }

  get fetch(): Fetch {
    return this.#options.fetch;
  }

  get baseURL(): string {
    return this.#options.baseURL;
  }

  async request(spec: RequestSpec, options: RequestOptions = {}): Promise<HttpResult> {
    const maxRetries = options.maxRetries ?? this.#options.maxRetries;
    const timeout = options.timeout ?? this.#options.timeout;
    const init: RequestInit = {
      method: spec.method,
      headers: this.headers(spec, options, 'application/json'),
      ...(spec.body !== undefined ? { body: JSON.stringify(spec.body) } : {}),
    };
    const url = this.url(spec);
    for (let attempt = 0; ; attempt++) {
      let result: HttpResult;
      try {
        result = await this.attempt(url, init, timeout, options.signal);
      } catch (error) {
        const retry = error instanceof ConnectionError && attempt < maxRetries && (retries(spec) || neverSent(error));
        if (!retry) throw error;
        await sleep(retryDelayMs(attempt), options.signal);
        continue;
      }
      if (result.status >= 200 && result.status < 300) return result;
      if (attempt < maxRetries && retryableStatus(result, spec)) {
        await sleep(retryDelayMs(attempt, result.headers), options.signal);
        continue;
      }
      throw apiErrorFrom(result.status, result.headers, result.body);
    }
  }

  /** One HTTP exchange, body included, within `timeout` ms. */
  private async attempt(url: string, init: RequestInit, timeout: number, signal: AbortSignal | undefined): Promise<HttpResult> {
    if (signal?.aborted) throw new AbortError('The request was aborted.', { cause: signal.reason });
    const controller = new AbortController();
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      controller.abort();
    }, timeout);
    const onAbort = (): void => controller.abort(signal?.reason);
    signal?.addEventListener('abort', onAbort, { once: true });
    try {
      const response = await this.#options.fetch(url, { ...init, signal: controller.signal });
      const text = await response.text();
      return { status: response.status, headers: response.headers, body: parseBody(text) };
    } catch (error) {
      if (error instanceof MediagateError) throw error;
      if (signal?.aborted) throw new AbortError('The request was aborted.', { cause: signal.reason });
      if (timedOut) throw new TimeoutError(`No response from ${this.#options.baseURL} within ${timeout} ms.`, { cause: error });
      throw new ConnectionError(`Could not reach ${this.#options.baseURL}: ${describeCause(error)}`, { cause: error });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', onAbort);
    }
  }
}

/** Turns a fetch failure into the SDK's error (abort, connection), as `attempt` does. */
export function fetchFailure(error: unknown, baseURL: string, signal: AbortSignal | undefined): MediagateError {
  if (error instanceof MediagateError) return error;
  if (signal?.aborted) return new AbortError('The request was aborted.', { cause: signal.reason });
  return new ConnectionError(`Could not reach ${baseURL}: ${describeCause(error)}`, { cause: error });
}

export { parseBody };

/** A 2xx response whose body is not what the API documents (a proxy page, a different service). */
export function unexpectedResponse(result: HttpResult, expected: string): APIError {
  return new APIError({
    status: result.status,
    headers: result.headers,
    body: result.body,
    fields: { type: undefined, code: '', param: '', message: `Unexpected response from the server: expected ${expected}.` },
  });
}
