/**
 * The one way any `https://` media input is fetched, over the outbound client (outbound/): the
 * URL policy on the first URL and every redirect hop, the address policy on every connection
 * (the pool is built by `createFetchDispatcher`), the declared-size check. Here: the size cap
 * enforced while reading, one overall deadline, the redirect limit, abort, and the errors as
 * FetchError. Data URLs never reach the network; `loadMediaInput` accepts both kinds.
 */
import type { Dispatcher } from 'undici';
import { assertFetchableUrl, discard, explainFailure, FetchError, headerValue, readCapped, send } from '../outbound/client.js';
import { createFetchDispatcher } from '../outbound/connection.js';
import { checkMediaString, decodeDataUrl, decodedDataUrlSize } from './data-url.js';
import { isUnresolved, notPublic } from '../outbound/url-refusal.js';

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

let sharedDispatcher: Dispatcher | undefined;
function defaultDispatcher(): Dispatcher {
  sharedDispatcher ??= createFetchDispatcher();
  return sharedDispatcher;
}

/** Maps whatever the transfer threw to a FetchError, preferring the reason we aborted with. */
function toFetchError(err: unknown, signal: AbortSignal, host: string): FetchError {
  if (err instanceof FetchError) return err;
  if (signal.aborted && signal.reason instanceof FetchError) return signal.reason;
  const why = explainFailure(err);
  if (why.refused) return notPublic(why.refused.host, why.refused);
  // A name that does not resolve gets the words of one that resolves inward (url-refusal.ts).
  if (isUnresolved(err)) return notPublic(host, err);
  if (why.timedOut) return new FetchError('timeout', 'the server did not answer in time', { cause: err });
  return new FetchError('network', 'the transfer failed', { cause: err });
}

/** Fetches an https URL into memory under the limits of `options`. Throws FetchError. */
export async function fetchHttps(rawUrl: string, options: FetchOptions = {}): Promise<FetchedMedia> {
  const maxBytes = options.maxBytes ?? FETCH_DEFAULTS.maxBytes;
  const timeoutMs = options.timeoutMs ?? FETCH_DEFAULTS.timeoutMs;

  const url = assertFetchableUrl(rawUrl);
  if (options.signal?.aborted) throw new FetchError('aborted', 'the fetch was aborted', { cause: options.signal.reason });

  // One controller carries both the overall deadline and the caller's abort, so every await
  // below (connect, headers, each body chunk) stops at the same moment.
  const controller = new AbortController();
  const timer = setTimeout(() => controller.abort(new FetchError('timeout', `the fetch took longer than ${timeoutMs} ms`)), timeoutMs);
  const onAbort = (): void => controller.abort(new FetchError('aborted', 'the fetch was aborted', { cause: options.signal?.reason }));
  options.signal?.addEventListener('abort', onAbort, { once: true });

  try {
    const response = await send(url, {
      policed: options.dispatcher ?? defaultDispatcher(),
      followRedirects: options.maxRedirects ?? FETCH_DEFAULTS.maxRedirects,
      maxBytes,
      signal: controller.signal,
      timeoutMs,
      headers: { accept: 'image/*,video/*,audio/*;q=0.9,*/*;q=0.5', 'user-agent': 'mediagate' },
    });
    if (response.status < 200 || response.status > 299) {
      discard(response.body);
      throw new FetchError('http_status', `the server answered HTTP ${response.status}`, { status: response.status });
    }
    const bytes = await readCapped(response.body, maxBytes);
    if (bytes === undefined) throw new FetchError('too_large', `the response is larger than ${maxBytes} bytes`);
    const mime = (headerValue(response.headers['content-type']) ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
    return { bytes, mime, url: response.url.href };
  } catch (err) {
    throw toFetchError(err, controller.signal, url.hostname);
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
