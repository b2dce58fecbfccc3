import { MediagateError } from './errors.js';
import { HttpCore, type Fetch, type ResolvedClientOptions } from './http.js';
import { Images, Models, Videos } from './resources.js';
import { Tasks } from './tasks.js';
import { UsageReports } from './usage.js';
import { Webhooks } from './webhooks.js';

export const DEFAULT_BASE_URL = 'http://127.0.0.1:8080';
export const DEFAULT_TIMEOUT_MS = 60_000;
export const DEFAULT_MAX_RETRIES = 2;

/** Options of `new Mediagate(...)`, resolved once at construction. */
export interface ClientOptions {
  /**
   * Where the service listens, e.g. `https://media.example.com`. A trailing `/` or `/v1` is
   * ignored. Default: `MEDIAGATE_BASE_URL`, else `http://127.0.0.1:8080`.
   */
  readonly baseURL?: string;
  /** Sent as `Authorization: Bearer <apiKey>`. Default: `MEDIAGATE_API_KEY`; one of them is required. */
  readonly apiKey?: string;
  /** Milliseconds one HTTP attempt may take, body included, before a TimeoutError. Default 60000. */
  readonly timeout?: number;
  /**
   * Retries after the first attempt. Default 2. Reads are retried on 429, 408, 5xx and connection
   * errors; creates only on 429 and on connections never established (see http.ts), unless they
   * carry an `idempotencyKey`: then like reads (and on 409 `idempotency_key_in_use`). Delays follow
   * `Retry-After` when the server sends it (up to 60 s), else exponential backoff from 0.5 s.
   */
  readonly maxRetries?: number;
  /** A fetch implementation (a proxy agent, a test double). Default: `globalThis.fetch`. */
  readonly fetch?: Fetch;
  /** Headers sent with every request. */
  readonly defaultHeaders?: Readonly<Record<string, string>>;
}

function readEnv(name: string): string | undefined {
  const value = typeof process === 'undefined' ? undefined : process.env[name];
  return value === undefined || value.trim() === '' ? undefined : value.trim();
}

function normalizeBaseURL(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    throw new MediagateError(`The base URL '${value}' is not a valid URL.`);
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new MediagateError(`The base URL '${value}' must be http:// or https://.`);
  return `${url.origin}${url.pathname}`.replace(/\/+$/, '').replace(/\/v1$/, '');
}

function nonNegativeInteger(name: string, value: number | undefined, fallback: number, positive: boolean): number {
  if (value === undefined) return fallback;
  if (!Number.isInteger(value) || value < (positive ? 1 : 0)) {
    throw new MediagateError(`${name} must be ${positive ? 'a positive' : 'a non-negative'} integer; got ${value}.`);
  }
  return value;
}

/** `keyVariable`: the environment variable the key defaults to (`MEDIAGATE_ADMIN_KEY` for the admin client). */
export function resolveClientOptions(options: ClientOptions, keyVariable = 'MEDIAGATE_API_KEY'): ResolvedClientOptions {
  const apiKey = options.apiKey ?? readEnv(keyVariable);
  if (apiKey === undefined || apiKey === '') {
    throw new MediagateError(`No API key: pass { apiKey } or set ${keyVariable}.`);
  }
  const fetch: Fetch | undefined = options.fetch ?? (typeof globalThis.fetch === 'function' ? globalThis.fetch.bind(globalThis) : undefined);
  if (!fetch) throw new MediagateError('No fetch implementation: pass { fetch } (Node.js 20 has one built in).');
  return {
    baseURL: normalizeBaseURL(options.baseURL ?? readEnv('MEDIAGATE_BASE_URL') ?? DEFAULT_BASE_URL),
    apiKey,
    timeout: nonNegativeInteger('timeout', options.timeout, DEFAULT_TIMEOUT_MS, true),
    maxRetries: nonNegativeInteger('maxRetries', options.maxRetries, DEFAULT_MAX_RETRIES, false),
    fetch,
    defaultHeaders: options.defaultHeaders ?? {},
  };
}

/**
 * The mediagate client.
 *
 * ```ts
 * const client = new Mediagate(); // MEDIAGATE_BASE_URL, MEDIAGATE_API_KEY
 * const task = await client.videos.createAndWait({ model: 'vendora/famw-2.7-t2v', prompt: 'a fox', duration: 4 });
 * console.log(task.outputs[0]?.url);
 * ```
 */
export class Mediagate {
  readonly baseURL: string;
  readonly timeout: number;
  readonly maxRetries: number;
  readonly videos: Videos;
  readonly images: Images;
  readonly models: Models;
  readonly webhooks: Webhooks;
  /** The key's usage and budget (`GET /v1/usage`). */
  readonly usage: UsageReports;
  /** The key's newest tasks of both families (`GET /v1/tasks/recent`). */
  readonly tasks: Tasks;

  constructor(options: ClientOptions = {}) {
    const resolved = resolveClientOptions(options);
    const http = new HttpCore(resolved);
    this.baseURL = resolved.baseURL;
    this.timeout = resolved.timeout;
    this.maxRetries = resolved.maxRetries;
    this.videos = new Videos(http);
    this.images = new Images(http);
    this.models = new Models(http);
    this.webhooks = new Webhooks(http);
    this.usage = new UsageReports(http);
    this.tasks = new Tasks(http);
  }
}
