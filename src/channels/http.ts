/**
 * The one HTTP function adapters use (ChannelHttp). It answers values, never throws, and keeps
 * the distinction the lifecycle lives on: `not_sent` only when the request provably never reached
 * the upstream (resolution, connect, TLS handshake), `lost` for everything after that. It refuses
 * any URL off the channel's origin, so a key set in a header cannot travel anywhere else.
 */
import type { Dispatcher, FormData } from 'undici';
import { explainFailure, readCapped, send } from '../outbound/client.js';
import { createTrustedDispatcher } from '../outbound/connection.js';
import type { ChannelHttp, HttpCall, HttpOutcome } from './protocol.js';

const MAX_TEXT = 1024 * 1024;
/** Larger API answers are not read (an API answer is a few KiB): `lost`, so a submit stays safe. */
const MAX_BODY = 8 * 1024 * 1024;
const DEFAULT_TIMEOUT_MS = 30_000;

export interface ChannelHttpOptions {
  readonly baseUrl: string;
  readonly dispatcher?: Dispatcher;
  readonly timeoutMs?: number;
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
  const dispatcher = options.dispatcher ?? createTrustedDispatcher({ keepAliveTimeoutMs: 10_000 });
  const ownDispatcher = options.dispatcher === undefined ? dispatcher : undefined;
  // Only the channel's origin is reached (no policed pool): a key set in a header stays there.
  const trusted = { origin: base.origin, dispatcher };

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
      const response = await send(url, {
        method: spec.method,
        headers,
        signal,
        timeoutMs,
        trusted,
        ...(body === undefined ? {} : { body }),
      });
      sent = true;
      const cap = Math.max(MAX_BODY, spec.maxBytes ?? 0);
      const raw = await readCapped(response.body, cap);
      if (raw === undefined) return { kind: 'lost', reason: `answer larger than ${cap} bytes` };
      const text = raw.subarray(0, MAX_TEXT).toString('utf8');
      let json: unknown;
      try {
        // Parsed whole: an answer longer than the text cap (an inline video) is still read.
        json = raw.length === 0 ? undefined : JSON.parse(raw.length > MAX_TEXT ? raw.toString('utf8') : text);
      } catch {
        json = undefined;
      }
      const flat = flatHeaders(response.headers);
      const retryAfterMs = parseRetryAfter(flat['retry-after']);
      return {
        kind: 'response',
        status: response.status,
        headers: flat,
        json,
        text,
        ...(retryAfterMs === undefined ? {} : { retryAfterMs }),
      };
    } catch (err) {
      const why = explainFailure(err);
      if (!sent && why.notSentCode !== undefined) return { kind: 'not_sent', reason: why.notSentCode };
      const code = why.notSentCode ?? why.code ?? (err instanceof Error ? err.name : 'error');
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
