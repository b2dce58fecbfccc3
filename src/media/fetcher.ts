/**
 * The one way any `https://` media input is fetched. Everything that limits what a user-supplied
 * URL can make us do lives here:
 * - `assertFetchableUrl`: the URL policy, applied to the first URL and to every redirect hop;
 * - `createFetchDispatcher`: the connection policy (the place for address checks: a `lookup`
 *   that resolves and refuses private addresses, and a check of the connected socket's address);
 * - `fetchHttps`: size cap enforced while streaming, one overall deadline, redirect limit, abort.
 * Data URLs never reach the network; `loadMediaInput` accepts both kinds.
 */
import { lookup as dnsLookup, type LookupAddress } from 'node:dns';
import type { LookupFunction } from 'node:net';
import type { ConnectionOptions } from 'node:tls';
import { Agent, buildConnector, errors as undiciErrors, request, type Dispatcher } from 'undici';
import { createAddressPolicy, isAddressLiteral, type AddressPolicy, type FetchAllowList } from './address-policy.js';
import { checkMediaString, decodeDataUrl, decodedDataUrlSize } from './data-url.js';

export type { FetchAllowList } from './address-policy.js';

export type FetchFailureReason =
  | 'bad_url'
  | 'too_large'
  | 'timeout'
  | 'http_status'
  | 'too_many_redirects'
  | 'network'
  | 'aborted'
  /** The host resolves to (or is) an address the policy refuses: loopback, private, metadata... */
  | 'refused';

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
   * DNS resolution used for every connection (default `dns.lookup`; tests pass a stub). Its
   * answers are filtered by the address policy before any connection is made.
   */
  readonly lookup?: LookupFunction;
  /** Hosts and non-public ranges an operator allowed (development only). Default: none. */
  readonly allow?: FetchAllowList;
  /** Extra TLS options (e.g. `ca` in tests). */
  readonly tls?: ConnectionOptions;
  /** Connect timeout in ms. Default 10000. */
  readonly connectTimeoutMs?: number;
}

/**
 * Thrown inside the connection path when the policy refuses an address. It carries no address
 * in its message: a client must not learn how our resolver sees internal names.
 */
export class AddressRefusedError extends Error {
  override readonly name = 'AddressRefusedError';
  readonly code = 'EMEDIAGATE_ADDRESS_REFUSED';
  constructor(
    readonly host: string,
    /** The range name ('loopback', 'private', ...), for logs. */
    readonly range: string,
  ) {
    super(`${host} is not a public address`);
  }
}

type LookupCallback = Parameters<LookupFunction>[2];

/**
 * Wraps a resolver so it only ever answers allowed addresses: the address a socket connects to
 * is the one this function returned, so there is no window between check and connect (DNS
 * rebinding cannot slip a private address in after the check).
 */
function guardedLookup(inner: LookupFunction, policy: AddressPolicy): LookupFunction {
  return (hostname, options, callback: LookupCallback) => {
    inner(hostname, { ...options, all: true }, (error, answer, family) => {
      if (error) {
        callback(error, '', undefined);
        return;
      }
      const addresses: LookupAddress[] = typeof answer === 'string' ? [{ address: answer, family: family ?? (answer.includes(':') ? 6 : 4) }] : answer;
      if (policy.hostAllowed(hostname)) {
        callback(null, options.all ? addresses : (addresses[0]?.address ?? ''), addresses[0]?.family);
        return;
      }
      const allowed: LookupAddress[] = [];
      let refusal = 'no address';
      for (const entry of addresses) {
        const why = policy.refusal(entry.address);
        if (why === undefined) allowed.push(entry);
        else refusal = why;
      }
      const first = allowed[0];
      if (!first) {
        callback(new AddressRefusedError(hostname, refusal), '', undefined);
        return;
      }
      if (options.all) callback(null, allowed);
      else callback(null, first.address, first.family);
    });
  };
}

/**
 * Builds the connection pool fetches go through; the single place for connection policy:
 * - a host on the allow-list is connected to whatever it resolves to;
 * - an IP-literal host (any spelling) is checked before connecting;
 * - a name is resolved through `guardedLookup`, which drops refused addresses;
 * - the connected socket's remote address is checked again before a byte of HTTP is sent.
 */
export function createFetchDispatcher(options: FetchDispatcherOptions = {}): Dispatcher {
  const policy = createAddressPolicy(options.allow);
  const base = buildConnector({
    ...options.tls,
    lookup: guardedLookup(options.lookup ?? dnsLookup, policy),
    timeout: options.connectTimeoutMs ?? 10_000,
  });
  const connect: buildConnector.connector = (target, callback) => {
    const host = target.hostname;
    const allowedHost = policy.hostAllowed(host);
    if (!allowedHost && isAddressLiteral(host)) {
      const why = policy.refusal(host);
      if (why !== undefined) {
        callback(new AddressRefusedError(host, why), null);
        return;
      }
    }
    base(target, (...result) => {
      const [error, socket] = result;
      if (error !== null) {
        callback(error, null);
        return;
      }
      const why = allowedHost ? undefined : policy.refusal(socket.remoteAddress ?? '');
      if (why !== undefined) {
        socket.destroy();
        callback(new AddressRefusedError(host, why), null);
        return;
      }
      callback(null, socket);
    });
  };
  return new Agent({
    connect,
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
  for (let cause: unknown = err, depth = 0; cause instanceof Error && depth < 5; cause = cause.cause, depth += 1) {
    if (cause instanceof AddressRefusedError) {
      return new FetchError('refused', `${cause.host} is not a public address; only public addresses are fetched`, { cause });
    }
  }
  if (err instanceof undiciErrors.ConnectTimeoutError || err instanceof undiciErrors.HeadersTimeoutError || err instanceof undiciErrors.BodyTimeoutError) {
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
  const timer = setTimeout(() => controller.abort(new FetchError('timeout', `the fetch took longer than ${timeoutMs} ms`)), timeoutMs);
  const onAbort = (): void => controller.abort(new FetchError('aborted', 'the fetch was aborted', { cause: options.signal?.reason }));
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
