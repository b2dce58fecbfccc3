/**
 * The one HTTP function adapters use (ChannelHttp). It answers values, never throws, and keeps
 * the distinction the lifecycle lives on: `not_sent` only when the request provably never reached
 * the upstream (resolution, connect, TLS handshake), `lost` for everything after that. It refuses
 * any URL off the channel's origin, so a key set in a header cannot travel anywhere else.
 */
import { Agent, request, type Dispatcher, type FormData } from 'undici';
import type { ChannelHttp, HttpCall, HttpOutcome } from './protocol.js';

const MAX_TEXT = 1024 * 1024;
/** Larger API answers are not read (an API answer is a few KiB): `lost`, so a submit stays safe. */
const MAX_BODY = 8 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

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

export interface ChannelHttpOptions {
  readonly baseUrl: string;
  readonly dispatcher?: Dispatcher;
  readonly timeoutMs?: number;
}

function errorCode(err: unknown): string {
  for (let at: unknown = err, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth += 1) {
    const code = (at as { code?: unknown }).code;
    if (typeof code === 'string' && NOT_SENT_CODES.has(code)) return code;
  }
  const code = err instanceof Error ? (err as { code?: unknown }).code : undefined;
  return typeof code === 'string' ? code : err instanceof Error ? err.name : 'error';
}

/** Parses Retry-After (delta seconds or HTTP date) into ms; undefined when absent or absurd (> 1 h). */
export function parseRetryAfter(value: string | undefined, now: number = Date.now()): number | undefined {
  if (value === undefined || value.trim() === '') return undefined;
  const text = value.trim();
  const ms = /^\d+(\.\d+)?$/.test(text) ? Number(text) * 1000 : Date.parse(text) - now;
  if (!Number.isFinite(ms)) return undefined;
  return Math.max(0, Math.min(ms, 3_600_000));
}

function flatHeaders(headers: Record<string, string | string[] | undefined>): Record<string, string> {
  const out: Record<string, string> = {};
  for (const [name, value] of Object.entries(headers)) {
    if (value === undefined) continue;
    out[name.toLowerCase()] = Array.isArray(value) ? value.join(', ') : value;
  }
  return out;
}

/** How long a shutdown waits for open upstream requests before it drops them. */
const CLOSE_GRACE_MS = 1000;

export function createChannelHttp(options: ChannelHttpOptions): ChannelHttp & { close(): Promise<void> } {
  const base = new URL(options.baseUrl);
  const basePath = base.pathname.replace(/\/+$/, '');
  const ownDispatcher = options.dispatcher === undefined ? new Agent({ connect: { timeout: 10_000 }, keepAliveTimeout: 10_000 }) : undefined;
  const dispatcher = options.dispatcher ?? ownDispatcher;

  async function call(spec: HttpCall): Promise<HttpOutcome> {
    let url: URL;
    try {
      url = /^https?:\/\//i.test(spec.path) ? new URL(spec.path) : new URL(`${basePath}${spec.path.startsWith('/') ? '' : '/'}${spec.path}`, base.origin);
    } catch {
      return { kind: 'not_sent', reason: 'bad URL' };
    }
    if (url.origin !== base.origin) return { kind: 'not_sent', reason: 'URL off the channel origin refused' };

    const timeoutMs = spec.timeoutMs ?? options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
    const headers: Record<string, string> = { 'user-agent': 'mediagate', accept: 'application/json', ...spec.headers };
    let body: string | FormData | undefined;
    if (spec.json !== undefined) {
      headers['content-type'] = 'application/json';
      body = JSON.stringify(spec.json);
    } else if (spec.form !== undefined) {
      body = spec.form;
    }
    const signal = AbortSignal.timeout(timeoutMs);
    let sent = false;
    try {
      const response = await request(url, {
        method: spec.method,
        headers,
        body,
        signal,
        headersTimeout: timeoutMs,
        bodyTimeout: timeoutMs,
        ...(dispatcher === undefined ? {} : { dispatcher }),
      });
      sent = true;
      const chunks: Buffer[] = [];
      let size = 0;
      for await (const chunk of response.body as AsyncIterable<Buffer>) {
        size += chunk.length;
        if (size > MAX_BODY) {
          response.body.once('error', () => {});
          response.body.destroy();
          return { kind: 'lost', reason: `answer larger than ${MAX_BODY} bytes` };
        }
        chunks.push(chunk);
      }
      const raw = Buffer.concat(chunks, size);
      const text = raw.subarray(0, MAX_TEXT).toString('utf8');
      let json: unknown;
      try {
        json = text === '' ? undefined : JSON.parse(text);
      } catch {
        json = undefined;
      }
      const flat = flatHeaders(response.headers);
      const retryAfterMs = parseRetryAfter(flat['retry-after']);
      return {
        kind: 'response',
        status: response.statusCode,
        headers: flat,
        json,
        text,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    } catch (err) {
      const code = errorCode(err);
      if (!sent && NOT_SENT_CODES.has(code)) return { kind: 'not_sent', reason: code };
      return { kind: 'lost', reason: signal.aborted ? `no answer within ${timeoutMs} ms` : code };
    }
  }

  return {
    request: call,
    async close() {
      // Called after the scheduler's drain: a request still open then belongs to a step that
      // lost its chance to finish (its lease hands the task over), so it must not hold the
      // shutdown. undici's close() waits for every open request; give it a moment, then destroy.
      if (!ownDispatcher) return;
      let timer: NodeJS.Timeout | undefined;
      const closed = await Promise.race([
        ownDispatcher.close().then(() => true),
        new Promise<false>((resolve) => (timer = setTimeout(() => resolve(false), CLOSE_GRACE_MS))),
      ]);
      clearTimeout(timer);
      if (!closed) await ownDispatcher.destroy();
    },
  };
}
