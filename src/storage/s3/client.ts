import type { Readable } from 'node:stream';
import type { Dispatcher } from 'undici';
import { discard, FetchError, headerValue, readCapped, send, type ResponseBody } from '../../outbound/client.js';
import { createTrustedDispatcher } from '../../outbound/connection.js';
import { presignGet, signHeaders, UNSIGNED_PAYLOAD, uriEncode, type S3Credentials } from './sigv4.js';

export interface S3Options {
  readonly bucket: string;
  /** e.g. `http://127.0.0.1:7480`; default `https://s3.<region>.amazonaws.com`. */
  readonly endpoint: string | undefined;
  readonly region: string;
  /** `<endpoint>/<bucket>/<key>` (Ceph, MinIO) instead of `<bucket>.<endpoint host>/<key>`. */
  readonly pathStyle: boolean;
  readonly credentials: S3Credentials;
  /** Tests: the pool (default one kept-alive pool for the store's origin). */
  readonly dispatcher?: Dispatcher;
}

/** An S3 error answer: its HTTP status and S3's code (`NoSuchBucket`, `AccessDenied`...). */
export class S3Error extends Error {
  override readonly name = 'S3Error';
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
  ) {
    super(message);
  }
}

/** The upload's own file could not be read: not the gateway's fault. */
function isLocalFileError(error: unknown): boolean {
  const code = (error as { code?: unknown } | null)?.code;
  return code === 'ENOENT' || code === 'EACCES' || code === 'EISDIR' || code === 'EMFILE';
}

/** How long to wait for an answer's headers, or between two chunks of a body. */
const TIMEOUT_MS = 60_000;
/** Largest error or listing body read. */
const MAX_XML_BYTES = 8 * 1024 * 1024;

const XML_ENTITIES: Readonly<Record<string, string>> = { amp: '&', lt: '<', gt: '>', quot: '"', apos: "'" };

function xmlText(raw: string): string {
  return raw.replace(/&(amp|lt|gt|quot|apos|#\d+|#x[0-9a-f]+);/gi, (_, entity: string) => {
    if (entity.startsWith('#x') || entity.startsWith('#X')) return String.fromCodePoint(Number.parseInt(entity.slice(2), 16));
    if (entity.startsWith('#')) return String.fromCodePoint(Number(entity.slice(1)));
    return XML_ENTITIES[entity.toLowerCase()] ?? '';
  });
}

/** The text of each `<tag>` element of `xml` (S3's answers are flat enough for this). */
function elements(xml: string, tag: string): string[] {
  return [...xml.matchAll(new RegExp(`<${tag}>([\\s\\S]*?)</${tag}>`, 'g'))].map((match) => match[1] ?? '');
}

export interface ListedObject {
  readonly key: string;
  readonly size: number;
  readonly mtimeMs: number;
}

/**
 * The few S3 calls the media store makes (HEAD bucket, PUT, HEAD, GET with a range, DELETE,
 * ListObjectsV2), signed with SigV4 and sent through the one outbound client to the configured
 * origin only. Streamed both ways: an upload's body is a stream of known length, a download's
 * body is handed over unread.
 */
export class S3Client {
  private readonly base: URL;
  private readonly origin: string;
  private readonly dispatcher: Dispatcher;

  constructor(private readonly options: S3Options) {
    const endpoint = new URL(options.endpoint ?? `https://s3.${options.region}.amazonaws.com`);
    this.base = options.pathStyle
      ? new URL(`${endpoint.origin}${endpoint.pathname.replace(/\/$/, '')}/${options.bucket}`)
      : new URL(`${endpoint.protocol}//${options.bucket}.${endpoint.host}${endpoint.pathname.replace(/\/$/, '')}`);
    this.origin = this.base.origin;
    this.dispatcher = options.dispatcher ?? createTrustedDispatcher({ keepAliveTimeoutMs: 10_000 });
  }

  /** The URL of an object (or of the bucket, for `''`), query included. */
  private url(key: string, query: Record<string, string> = {}): URL {
    const url = new URL(`${this.base.href}/${key.split('/').map(uriEncode).join('/')}`);
    if (key === '') url.pathname = `${this.base.pathname}/`;
    for (const [name, value] of Object.entries(query)) url.searchParams.set(name, value);
    return url;
  }

  private async call(
    method: 'GET' | 'HEAD' | 'PUT' | 'DELETE',
    url: URL,
    extra: { headers?: Record<string, string>; body?: Buffer | Readable; signal?: AbortSignal } = {},
  ): Promise<{ status: number; headers: Record<string, string | string[] | undefined>; body: ResponseBody }> {
    const headers = signHeaders({
      method,
      url,
      headers: extra.headers ?? {},
      payloadHash: UNSIGNED_PAYLOAD,
      credentials: this.options.credentials,
      region: this.options.region,
    });
    const signal = extra.signal ?? new AbortController().signal;
    return send(url, {
      method,
      headers,
      signal,
      timeoutMs: TIMEOUT_MS,
      trusted: { origin: this.origin, dispatcher: this.dispatcher },
      ...(extra.body === undefined ? {} : { body: extra.body }),
    }).catch((cause: unknown) => {
      if (cause instanceof FetchError || signal.aborted || isLocalFileError(cause)) throw cause;
      // Refused, reset or silent: the gateway is unreachable, which callers tell from an S3
      // answer (outages.ts: a 503 for a download, a retried write for a finished render).
      throw new FetchError('network', `S3 ${method} could not reach ${this.origin}: ${cause instanceof Error ? cause.message : 'unknown error'}`, { cause });
    });
  }

  /** Throws the S3Error of an answer that is not 2xx (its body read for S3's code). */
  private async fail(method: string, key: string, response: { status: number; body: ResponseBody }): Promise<never> {
    const xml = (await readCapped(response.body, 64 * 1024).catch(() => undefined))?.toString('utf8') ?? '';
    const code = xmlText(elements(xml, 'Code')[0] ?? '') || (response.status === 404 ? 'NotFound' : `HTTP${response.status}`);
    throw new S3Error(response.status, code, `S3 ${method} ${key || '(bucket)'} answered ${response.status} ${code}`);
  }

  /** Whether the bucket is there and these credentials reach it (throws S3Error otherwise). */
  async headBucket(): Promise<void> {
    const response = await this.call('HEAD', this.url(''));
    discard(response.body);
    if (response.status === 404) throw new S3Error(404, 'NoSuchBucket', `bucket ${this.options.bucket} does not exist`);
    if (response.status < 200 || response.status > 299)
      throw new S3Error(response.status, response.status === 403 ? 'AccessDenied' : `HTTP${response.status}`, `S3 HEAD bucket answered ${response.status}`);
  }

  /** One PUT: the object appears whole when the body is complete, or not at all. */
  async putObject(key: string, body: Buffer | Readable, length: number, contentType: string): Promise<void> {
    const response = await this.call('PUT', this.url(key), { headers: { 'content-length': String(length), 'content-type': contentType }, body });
    if (response.status < 200 || response.status > 299) return this.fail('PUT', key, response);
    discard(response.body);
  }

  /** The object's size and last write, or undefined when there is none. */
  async headObject(key: string): Promise<{ size: number; mtimeMs: number } | undefined> {
    const response = await this.call('HEAD', this.url(key));
    discard(response.body);
    if (response.status === 404) return undefined;
    if (response.status < 200 || response.status > 299)
      throw new S3Error(response.status, `HTTP${response.status}`, `S3 HEAD ${key} answered ${response.status}`);
    return { size: Number(headerValue(response.headers['content-length'])), mtimeMs: Date.parse(headerValue(response.headers['last-modified']) ?? '') || 0 };
  }

  /** The object's bytes (a range of them), unread; undefined when there is none. */
  async getObject(key: string, range?: { start: number; end: number }, signal?: AbortSignal): Promise<ResponseBody | undefined> {
    const response = await this.call('GET', this.url(key), {
      ...(range === undefined ? {} : { headers: { range: `bytes=${range.start}-${range.end}` } }),
      ...(signal === undefined ? {} : { signal }),
    });
    if (response.status === 404) {
      discard(response.body);
      return undefined;
    }
    if (response.status < 200 || response.status > 299) return this.fail('GET', key, response);
    return response.body;
  }

  /** Deletes the object; one that is not there is no error. */
  async deleteObject(key: string): Promise<void> {
    const response = await this.call('DELETE', this.url(key));
    if (response.status !== 404 && (response.status < 200 || response.status > 299)) return this.fail('DELETE', key, response);
    discard(response.body);
  }

  /** Every object under `prefix`, a page (up to 1000) at a time. */
  async *list(prefix: string): AsyncIterable<ListedObject> {
    let token: string | undefined;
    do {
      const query: Record<string, string> = { 'list-type': '2', prefix, ...(token === undefined ? {} : { 'continuation-token': token }) };
      const response = await this.call('GET', this.url('', query));
      if (response.status < 200 || response.status > 299) await this.fail('LIST', prefix, response);
      const xml = (await readCapped(response.body, MAX_XML_BYTES))?.toString('utf8') ?? '';
      for (const contents of elements(xml, 'Contents')) {
        yield {
          key: xmlText(elements(contents, 'Key')[0] ?? ''),
          size: Number(elements(contents, 'Size')[0] ?? 0),
          mtimeMs: Date.parse(elements(contents, 'LastModified')[0] ?? '') || 0,
        };
      }
      token = elements(xml, 'IsTruncated')[0] === 'true' ? xmlText(elements(xml, 'NextContinuationToken')[0] ?? '') || undefined : undefined;
    } while (token !== undefined);
  }

  /** A presigned GET URL of the object (`response-*` overrides signed in). */
  presign(key: string, signedAt: Date, expiresS: number, responseHeaders: Record<string, string> = {}): string {
    return presignGet({ url: this.url(key, responseHeaders), credentials: this.options.credentials, region: this.options.region, signedAt, expiresS });
  }

  async close(): Promise<void> {
    if (this.options.dispatcher === undefined) await this.dispatcher.close();
  }
}
