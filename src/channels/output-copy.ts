/**
 * Copies one upstream output into a file of ours, checking it on the way
 * (docs/guides/channels.md#what-clients-see and #what-an-operator-can-rely-on): a URL on the
 * channel's own origin (scheme, host, port of base_url) is trusted as the operator configured it;
 * any other host, first URL or redirect hop, goes through the outbound client's URL and address
 * policy (outbound/). Bytes and time are capped; the file must be the promised
 * media by its bytes (MP4: an `ftyp` box first; PNG: its signature). Failures are values with
 * code `output_invalid`; `transient` says whether trying again later may help (network, 5xx).
 *
 * The channel's key is never sent, except where an output names headers for the channel's own
 * origin (the Gemini API's file download: https://ai.google.dev/api/files, `files/{id}:download`
 * with `x-goog-api-key`, as googleapis/js-genai/src/node/_node_downloader.ts does): those go to
 * that origin only, never to a host a redirect points at. A `data:` URL (Vertex AI answers a
 * video inline as `bytesBase64Encoded`) is decoded and checked like a download.
 */
import { createWriteStream } from 'node:fs';
import { rm, writeFile } from 'node:fs/promises';
import { pipeline } from 'node:stream/promises';
import { Transform, type TransformCallback } from 'node:stream';
import type { Dispatcher } from 'undici';
import type { FetchAllowList } from '../outbound/address-policy.js';
import { discard, explainFailure, FetchError, send } from '../outbound/client.js';
import { createFetchDispatcher, createTrustedDispatcher } from '../outbound/connection.js';
import { failure, type UpstreamFailure } from './failure.js';

export const OUTPUT_COPY_DEFAULTS = {
  /** 512 MiB: above any output of the catalog (30 s of 1080p). */
  maxBytes: 512 * 1024 * 1024,
  timeoutMs: 300_000,
  maxRedirects: 3,
} as const;

export interface OutputCopyOptions {
  /** The channel's base_url: its origin is trusted. */
  readonly channelBaseUrl: string;
  readonly expect: 'video' | 'image';
  /** Where to write; removed again when the copy fails. */
  readonly destination: string;
  readonly maxBytes?: number;
  readonly timeoutMs?: number;
  /** Connections to the channel's origin (default: a plain pool). */
  readonly trustedDispatcher?: Dispatcher;
  /** Connections anywhere else: build it with createFetchDispatcher (default: one with `allow`). */
  readonly policedDispatcher?: Dispatcher;
  /** MEDIAGATE_FETCH_ALLOW_*, used when no policedDispatcher is given. */
  readonly allow?: FetchAllowList;
  readonly signal?: AbortSignal;
  /** Sent only to the channel's own origin (UpstreamOutput.headers). */
  readonly originHeaders?: Readonly<Record<string, string>>;
}

export type OutputCopyOutcome =
  | { readonly ok: true; readonly bytes: number; readonly contentType: 'video/mp4' | 'image/png' }
  | { readonly ok: false; readonly error: UpstreamFailure; readonly transient: boolean };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** True when the first bytes are the promised media: an ISO BMFF `ftyp` box, or the PNG signature. */
export function looksLike(expect: 'video' | 'image', head: Buffer): boolean {
  if (expect === 'image') return head.length >= 8 && head.subarray(0, 8).equals(PNG_SIGNATURE);
  if (head.length < 12 || head.toString('latin1', 4, 8) !== 'ftyp') return false;
  const size = head.readUInt32BE(0);
  return size === 1 || size >= 16;
}

class Invalid extends Error {
  constructor(
    message: string,
    readonly transient: boolean,
  ) {
    super(message);
  }
}

/** Counts bytes past the cap and checks the head of the stream before anything else is written. */
class Checker extends Transform {
  total = 0;
  private head: Buffer[] = [];
  private headBytes = 0;
  private checked = false;
  constructor(
    private readonly expect: 'video' | 'image',
    private readonly maxBytes: number,
  ) {
    super();
  }
  override _transform(chunk: Buffer, _enc: BufferEncoding, done: TransformCallback): void {
    this.total += chunk.length;
    if (this.total > this.maxBytes) return done(new Invalid(`the output is larger than ${this.maxBytes} bytes`, false));
    if (this.checked) return done(null, chunk);
    this.head.push(chunk);
    this.headBytes += chunk.length;
    if (this.headBytes < 16) return done();
    return this.release(done);
  }
  override _flush(done: TransformCallback): void {
    if (this.checked) return done();
    if (this.headBytes === 0) return done(new Invalid('the output is empty', false));
    this.release(done);
  }
  private release(done: TransformCallback): void {
    const head = Buffer.concat(this.head);
    if (!looksLike(this.expect, head)) return done(new Invalid(`the output is not ${this.expect === 'video' ? 'an MP4 video' : 'a PNG image'}`, false));
    this.checked = true;
    this.head = [];
    done(null, head);
  }
}

let sharedTrusted: Dispatcher | undefined;
const policedByAllow = new WeakMap<object, Dispatcher>();
let sharedPoliced: Dispatcher | undefined;

function policed(options: OutputCopyOptions): Dispatcher {
  if (options.policedDispatcher) return options.policedDispatcher;
  if (options.allow === undefined) return (sharedPoliced ??= createFetchDispatcher());
  let dispatcher = policedByAllow.get(options.allow);
  if (!dispatcher) policedByAllow.set(options.allow, (dispatcher = createFetchDispatcher({ allow: options.allow })));
  return dispatcher;
}

export async function copyOutput(rawUrl: string, options: OutputCopyOptions): Promise<OutputCopyOutcome> {
  const maxBytes = options.maxBytes ?? OUTPUT_COPY_DEFAULTS.maxBytes;
  const timeoutMs = options.timeoutMs ?? OUTPUT_COPY_DEFAULTS.timeoutMs;
  const origin = new URL(options.channelBaseUrl).origin;
  const signal = options.signal ? AbortSignal.any([options.signal, AbortSignal.timeout(timeoutMs)]) : AbortSignal.timeout(timeoutMs);
  const fail = (message: string, transient: boolean): OutputCopyOutcome => ({
    ok: false,
    error: failure('output_invalid', `the upstream output could not be kept: ${message}`),
    transient,
  });

  if (rawUrl.startsWith('data:')) return copyInline(rawUrl, options.expect, maxBytes, options.destination, fail);
  let url: URL;
  try {
    url = new URL(rawUrl);
  } catch {
    return fail('its URL is not valid', false);
  }
  try {
    const response = await send(url, {
      trusted: { origin, dispatcher: options.trustedDispatcher ?? (sharedTrusted ??= createTrustedDispatcher({ keepAliveTimeoutMs: 5_000 })) },
      policed: policed(options),
      followRedirects: OUTPUT_COPY_DEFAULTS.maxRedirects,
      maxBytes,
      signal,
      timeoutMs,
      headers: { 'user-agent': 'mediagate', accept: options.expect === 'video' ? 'video/mp4,*/*;q=0.5' : 'image/png,*/*;q=0.5' },
      ...(options.originHeaders === undefined ? {} : { trustedHeaders: { ...options.originHeaders } }),
    });
    if (response.status !== 200) {
      discard(response.body);
      // 403/404/410: expired or missing for good; 429/5xx may pass.
      const transient = response.status === 429 || response.status >= 500;
      return fail(`HTTP ${response.status}${response.status === 403 ? ' (expired or refused)' : ''}`, transient);
    }
    const checker = new Checker(options.expect, maxBytes);
    await pipeline(response.body, checker, createWriteStream(options.destination));
    return { ok: true, bytes: checker.total, contentType: options.expect === 'video' ? 'video/mp4' : 'image/png' };
  } catch (err) {
    await rm(options.destination, { force: true });
    if (err instanceof Invalid) return fail(err.message, err.transient);
    if (err instanceof FetchError) return fail(err.message, false);
    if (explainFailure(err).refused) return fail('its host is not a public address', false);
    if (signal.aborted) return fail(`the transfer took longer than ${timeoutMs} ms`, true);
    return fail('the transfer failed', true);
  }
}

/** A Base64 `data:` URL, decoded under the same cap and checks as a download. */
async function copyInline(
  dataUrl: string,
  expect: 'video' | 'image',
  maxBytes: number,
  destination: string,
  fail: (message: string, transient: boolean) => OutputCopyOutcome,
): Promise<OutputCopyOutcome> {
  const comma = dataUrl.indexOf(',');
  if (comma < 0 || !dataUrl.slice(0, comma).endsWith(';base64')) return fail('its inline data is not Base64', false);
  // Base64 is 4 characters per 3 bytes: refuse before decoding what would pass the cap.
  if (((dataUrl.length - comma - 1) / 4) * 3 > maxBytes + 3) return fail(`the output is larger than ${maxBytes} bytes`, false);
  const bytes = Buffer.from(dataUrl.slice(comma + 1), 'base64');
  if (bytes.length === 0) return fail('the output is empty', false);
  if (!looksLike(expect, bytes.subarray(0, 16))) return fail(`the output is not ${expect === 'video' ? 'an MP4 video' : 'a PNG image'}`, false);
  try {
    await writeFile(destination, bytes);
  } catch {
    await rm(destination, { force: true });
    return fail('it could not be written', true);
  }
  return { ok: true, bytes: bytes.length, contentType: expect === 'video' ? 'video/mp4' : 'image/png' };
}
