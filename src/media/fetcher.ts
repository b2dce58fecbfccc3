/**
 * The one way any `https://` media input is fetched. Everything that limits what a user-supplied
 * URL can make us do lives here:
 * - `assertFetchableUrl`: the URL policy, applied to the first URL and to every redirect hop;
 * - `createFetchDispatcher`: the connection policy (the place for address checks: a `lookup`
 *   that resolves and refuses private addresses, and a check of the connected socket's address);
 * - `fetchHttps`: size cap enforced while streaming, one overall deadline, redirect limit, abort.
 * Data URLs never reach the network; `loadMediaInput` accepts both kinds.
 */
import type { LookupFunction } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { checkMediaString, decodeDataUrl, decodedDataUrlSize } from './data-url.js';

export type FetchFailureReason =
  | 'bad_url'
  | 'too_large'
  | 'timeout'
  | 'http_status'
  | 'too_many_redirects'
  | 'network'
  | 'aborted';

export class FetchError extends Error {
  override readonly name = 'FetchError';
  /** HTTP status for `http_status`; undefined otherwise. */
  readonly status: number | undefined;
  constructor(
    readonly reason: FetchFailureReason,
    message: string,
    options?: { cause?: unknown; status?: number },
  ) {
    super(message, options?.cause === undefined ? undefined : { cause: options.cause });
    this.status = options?.status;
  }
}

export const FETCH_DEFAULTS = {
  /** 25 MiB: above any input a model accepts (seed rule 3 allows 10 MB). */
  maxBytes: 25 * 1024 * 1024,
  timeoutMs: 20_000,
  maxRedirects: 3,
} as const;

export interface FetchOptions {
  /** Largest body accepted, in bytes; the transfer is cut as soon as it is exceeded. Default 25 MiB. */
  readonly maxBytes?: number;
  /** Deadline for the whole fetch (connect, redirects, headers and body), in ms. Default 20000. */
  readonly timeoutMs?: number;
  /** Redirects followed before giving up. Default 3. */
  readonly maxRedirects?: number;
  /** Cancels the fetch; the error is a FetchError with reason `aborted`. */
  readonly signal?: AbortSignal;
  /**
   * Connection pool to use; build it with `createFetchDispatcher` so the connection policy
   * applies. Default: one shared pool built by `createFetchDispatcher()`.
   */
  readonly dispatcher?: Dispatcher;
}

export interface FetchedMedia {
  readonly bytes: Buffer;
  /** Content type without parameters, lower case; '' when the server sent none. */
  readonly mime: string;
  /** The URL the bytes came from, after redirects. */
  readonly url: string;
}

export interface FetchDispatcherOptions {
  /**
   * DNS resolution used for every connection. The address policy (refusing loopback, private
   * and link-local addresses) belongs in this function, so every hop and retry goes through it.
   */
  readonly lookup?: LookupFunction;
  /** Extra TLS options (e.g. `ca` in tests). */
  readonly tls?: ConnectionOptions;
  /** Connect timeout in ms. Default 10000. */
  readonly connectTimeoutMs?: number;
}

/** Builds the connection pool fetches go through; the single place for connection policy. */
export function createFetchDispatcher(options: FetchDispatcherOptions = {}): Dispatcher {
  return new Agent({
    connect: {
      ...options.tls,
      ...(options.lookup ? { lookup: options.lookup } : {}),
      timeout: options.connectTimeoutMs ?? 10_000,
    },
    // A media fetch is one request; keeping idle sockets around only holds resources.
    keepAliveTimeout: 1_000,
  });
}

let sharedDispatcher: Dispatcher | undefined;
function defaultDispatcher(): Dispatcher {
  sharedDispatcher ??= createFetchDispatcher();
  return sharedDispatcher;
}

/** The URL policy for every hop: absolute `https:` with a host and no embedded credentials. */
export function assertFetchableUrl(raw: string | URL): URL {
  let url: URL;
  try {
    url = new URL(raw);
  } catch (cause) {
    throw new FetchError('bad_url', 'not a valid URL', { cause });
  }
  if (url.protocol !== 'https:') throw new FetchError('bad_url', `only https URLs are fetched, not ${url.protocol}`);
  if (url.hostname === '') throw new FetchError('bad_url', 'the URL has no host');
  if (url.username !== '' || url.password !== '') throw new FetchError('bad_url', 'URLs with credentials are not fetched');
  return url;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** Reads the body, cutting the transfer as soon as it grows past `maxBytes`. */
async function readCapped(body: Dispatcher.ResponseData['body'], maxBytes: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      body.destroy();
      throw new FetchError('too_large', `the response is larger than ${maxBytes} bytes`);
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

function discard(body: Dispatcher.ResponseData['body']): void {
  // Destroying instead of draining: a hostile server could make draining slow. The stream
  // reports its own destruction as an error that nobody else is listening for.
  body.once('error', () => {});
  body.destroy();
}

/** Maps whatever the transfer threw to a FetchError, preferring the reason we aborted with. */
function toFetchError(err: unknown, signal: AbortSignal): FetchError {
  if (err instanceof FetchError) return err;
  if (signal.aborted && signal.reason instanceof FetchError) return signal.reason;
  if (
    err instanceof undiciErrors.ConnectTimeoutError ||
    err instanceof undiciErrors.HeadersTimeoutError ||
    err instanceof undiciErrors.BodyTimeoutError
  ) {
    return new FetchError('timeout', 'the server did not answer in time', { cause: err });
  }
  return new FetchError('network', 'the transfer failed', { cause: err });
}

/** Fetches an https URL into memory under the limits of `options`. Throws FetchError. */
export async function fetchHttps(rawUrl: string, options: FetchOptions = {}): Promise<FetchedMedia> {
  const maxBytes = options.maxBytes ?? FETCH_DEFAULTS.maxBytes;
  const timeoutMs = options.timeoutMs ?? FETCH_DEFAULTS.timeoutMs;
  const maxRedirects = options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects;
  const dispatcher = options.dispatcher ?? defaultDispatcher();

  let url = assertFetchableUrl(rawUrl);
  if (options.signal?.aborted) throw new FetchError('aborted', 'the fetch was aborted', { cause: options.signal.reason });

  // One controller carries both the overall deadline and the caller's abort, so every await
  // below (connect, headers, each body chunk) stops at the same moment.
  const controller = new AbortController();
  const timer = setTimeout(
    () => controller.abort(new FetchError('timeout', `the fetch took longer than ${timeoutMs} ms`)),
    timeoutMs,
  );
  const onAbort = (): void =>
    controller.abort(new FetchError('aborted', 'the fetch was aborted', { cause: options.signal?.reason }));
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    for (let redirects = 0; ; redirects += 1) {
      const response = await request(url, {
        method: 'GET',
        dispatcher,
        signal: controller.signal,
        headers: { accept: 'image/*,video/*,audio/*;q=0.9,*/*;q=0.5', 'user-agent': 'mediagate' },
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
      });
      const { statusCode, headers, body } = response;

      if (REDIRECT_STATUSES.has(statusCode)) {
        discard(body);
        const location = headerValue(headers.location);
        if (location === undefined) {
          throw new FetchError('http_status', `HTTP ${statusCode} without a Location header`, { status: statusCode });
        }
        if (redirects >= maxRedirects) {
          throw new FetchError('too_many_redirects', `more than ${maxRedirects} redirects`);
        }
        url = assertFetchableUrl(new URL(location, url));
        continue;
      }
      if (statusCode < 200 || statusCode > 299) {
        discard(body);
        throw new FetchError('http_status', `the server answered HTTP ${statusCode}`, { status: statusCode });
      }
      const declared = Number(headerValue(headers['content-length']));
      if (Number.isFinite(declared) && declared > maxBytes) {
        discard(body);
        throw new FetchError('too_large', `the response declares ${declared} bytes; at most ${maxBytes} are accepted`);
      }
      const bytes = await readCapped(body, maxBytes);
      const mime = (headerValue(headers['content-type']) ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
      return { bytes, mime, url: url.href };
    }
  } catch (err) {
    throw toFetchError(err, controller.signal);
  } finally {
    clearTimeout(timer);
    options.signal?.removeEventListener('abort', onAbort);
  }
}

/**
 * Bytes of a media input given by value: a Base64 data URL (decoded locally) or an https URL
 * (fetched). Throws FetchError: `bad_url` for a string that is neither, `too_large` over
 * `maxBytes`, and the fetch reasons for https.
 */
export async function loadMediaInput(value: string, options: FetchOptions = {}): Promise<{ bytes: Buffer; mime: string }> {
  const check = checkMediaString(value);
  if (!check.ok) throw new FetchError('bad_url', `the input ${check.reason}`);
  if (check.kind === 'data') {
    const maxBytes = options.maxBytes ?? FETCH_DEFAULTS.maxBytes;
    if (decodedDataUrlSize(value) > maxBytes) {
      throw new FetchError('too_large', `the data URL holds more than ${maxBytes} bytes`);
    }
    return decodeDataUrl(value);
  }
  const { bytes, mime } = await fetchHttps(value, options);
  return { bytes, mime };
}
