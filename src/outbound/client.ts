/**
 * The one outbound HTTP client: every request mediagate makes to another server (media inputs,
 * upstream channel calls, upstream output copies, webhook deliveries, the S3 media store) is a `send`. It owns what
 * those requests have in common, written once:
 * - the URL policy (`assertFetchableUrl`) and the pool for each hop: an operator-configured
 *   origin through its own pool, any other URL through a pool built by `createFetchDispatcher`
 *   (connection.ts), so the address policy applies to every connection, redirects included;
 * - the redirect loop (only when asked to follow), with its limit;
 * - the check of a declared `Content-Length` against a size cap, before a byte is read;
 * - reading a body under a cap (`readCapped`) and throwing one away (`discard`);
 * - what a failed request means (`explainFailure`): the one walk down an error's cause chain.
 */
import type { IncomingHttpHeaders } from 'node:http';
import type { Readable } from 'node:stream';
import { errors as undiciErrors, request, type Dispatcher, type FormData } from 'undici';
import { AddressRefusedError } from './connection.js';

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

export type ResponseBody = Dispatcher.ResponseData['body'];

export interface SendOptions {
  readonly method?: Dispatcher.HttpMethod;
  readonly headers?: Record<string, string>;
  /** A Buffer or a stream for uploads to the media store (storage/s3/), sent as they come. */
  readonly body?: string | FormData | Buffer | Readable;
  /** Ends the request, whatever stage it is at (a deadline, a caller's abort). */
  readonly signal: AbortSignal;
  /** undici's wait for the headers, and between body chunks, in ms. */
  readonly timeoutMs: number;
  /**
   * The operator-configured origin (scheme, host, port) reached through its own pool, without
   * the URL or address policy: a channel's base_url.
   */
  readonly trusted?: { readonly origin: string; readonly dispatcher: Dispatcher };
  /** Headers added only on hops to the trusted origin (a channel's key), never across a redirect elsewhere. */
  readonly trustedHeaders?: Record<string, string>;
  /**
   * The pool for every other URL; build it with `createFetchDispatcher` so the address policy
   * applies to each connection. Each such URL, first or redirect hop, must also pass
   * `assertFetchableUrl`. Without it, only the trusted origin is reached.
   */
  readonly policed?: Dispatcher;
  /** Redirects followed at most (each hop routed and checked as above). Default: a 3xx is answered as it is. */
  readonly followRedirects?: number;
  /** A 2xx that declares a larger `Content-Length` is refused (`too_large`) before its body is read. */
  readonly maxBytes?: number;
}

export interface SentResponse {
  readonly status: number;
  readonly headers: IncomingHttpHeaders;
  /** Unread: pass it to `readCapped` or `discard`, or stream it; the caller owns it. */
  readonly body: ResponseBody;
  /** The URL that answered, after redirects. */
  readonly url: URL;
}

const REDIRECT_STATUSES = new Set([301, 302, 303, 307, 308]);

/** The first value of a header that may be repeated. */
export function headerValue(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/**
 * Throws a body away without reading it. Destroying instead of draining: a hostile server could
 * make draining slow. The stream reports its own destruction as an error nobody else listens for.
 */
export function discard(body: ResponseBody): void {
  body.once('error', () => {});
  body.destroy();
}

/** Reads a body into memory; undefined (and the transfer cut) as soon as it grows past `maxBytes`. */
export async function readCapped(body: ResponseBody, maxBytes: number): Promise<Buffer | undefined> {
  const chunks: Buffer[] = [];
  let total = 0;
  for await (const chunk of body as AsyncIterable<Buffer>) {
    total += chunk.length;
    if (total > maxBytes) {
      discard(body);
      return undefined;
    }
    chunks.push(chunk);
  }
  return Buffer.concat(chunks, total);
}

/**
 * One request, and its redirects when asked to follow them. Throws FetchError for what the
 * client itself refuses (`bad_url`, `http_status` for a redirect without a Location,
 * `too_many_redirects`, `too_large` by the declared size); anything else thrown comes from the
 * transfer: read it with `explainFailure`.
 */
export async function send(first: string | URL, options: SendOptions): Promise<SentResponse> {
  let url: URL;
  try {
    url = new URL(first);
  } catch (cause) {
    throw new FetchError('bad_url', 'not a valid URL', { cause });
  }
  for (let redirects = 0; ; redirects += 1) {
    let dispatcher: Dispatcher;
    let sentHeaders = options.headers;
    if (options.trusted !== undefined && url.origin === options.trusted.origin) {
      dispatcher = options.trusted.dispatcher;
      if (options.trustedHeaders !== undefined) sentHeaders = { ...options.headers, ...options.trustedHeaders };
    } else if (options.policed !== undefined) {
      url = assertFetchableUrl(url);
      dispatcher = options.policed;
    } else {
      throw new FetchError('bad_url', 'the URL is off the origin this client reaches');
    }
    const response = await request(url, {
      method: options.method ?? 'GET',
      dispatcher,
      signal: options.signal,
      headersTimeout: options.timeoutMs,
      bodyTimeout: options.timeoutMs,
      ...(sentHeaders === undefined ? {} : { headers: sentHeaders }),
      ...(options.body === undefined ? {} : { body: options.body }),
    });
    const { statusCode: status, headers, body } = response;

    if (options.followRedirects !== undefined && REDIRECT_STATUSES.has(status)) {
      discard(body);
      const location = headerValue(headers.location);
      if (location === undefined) throw new FetchError('http_status', `HTTP ${status} without a Location header`, { status });
      if (redirects >= options.followRedirects) throw new FetchError('too_many_redirects', `more than ${options.followRedirects} redirects`);
      url = new URL(location, url);
      continue;
    }
    if (options.maxBytes !== undefined && status >= 200 && status <= 299) {
      const declared = Number(headerValue(headers['content-length']));
      if (Number.isFinite(declared) && declared > options.maxBytes) {
        discard(body);
        throw new FetchError('too_large', `the response declares ${declared} bytes; at most ${options.maxBytes} are accepted`);
      }
    }
    return { status, headers, body, url };
  }
}

/** Error codes raised before a single byte of the request went out. */
const NOT_SENT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'UND_ERR_CONNECT_TIMEOUT',
  'ERR_TLS_CERT_ALTNAME_INVALID',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'CERT_HAS_EXPIRED',
]);

/** What a failed `send` (or the read of its body) means, from the error and its causes. */
export interface TransferFailure {
  /** The address policy refused the address a connection would have reached. */
  readonly refused: AddressRefusedError | undefined;
  /** A refusal of this client (URL policy, redirects, size). */
  readonly fetchError: FetchError | undefined;
  /** undici gave up waiting (connect, headers, or between body chunks). */
  readonly timedOut: boolean;
  /** A code that proves the request never left (resolution, connect, TLS handshake). */
  readonly notSentCode: string | undefined;
  /** The error's own code (`ECONNRESET`, `UND_ERR_SOCKET`...), when it has one: for logs. */
  readonly code: string | undefined;
}

function codeOf(err: Error): string | undefined {
  const code = (err as { code?: unknown }).code;
  return typeof code === 'string' ? code : undefined;
}

/** The one walk down a cause chain (undici wraps what the connector threw), five levels at most. */
function causeChain(err: unknown): Error[] {
  const chain: Error[] = [];
  for (let at: unknown = err; at instanceof Error && chain.length < 5; at = at.cause) chain.push(at);
  return chain;
}

export function explainFailure(err: unknown): TransferFailure {
  const chain = causeChain(err);
  const refused = chain.find((at): at is AddressRefusedError => at instanceof AddressRefusedError);
  const fetchError = chain.find((at): at is FetchError => at instanceof FetchError);
  const timedOut = chain.some(
    (at) => at instanceof undiciErrors.ConnectTimeoutError || at instanceof undiciErrors.HeadersTimeoutError || at instanceof undiciErrors.BodyTimeoutError,
  );
  const notSentCode = chain.map(codeOf).find((code) => code !== undefined && NOT_SENT_CODES.has(code));
  const code = err instanceof Error ? codeOf(err) : undefined;
  return { refused, fetchError, timedOut, notSentCode, code };
}
