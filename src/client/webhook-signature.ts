import { createHmac, timingSafeEqual } from 'node:crypto';
import { MediagateError } from './errors.js';
import type { WebhookEvent } from './types.js';

/**
 * Checks a webhook delivery the Standard Webhooks way (decisions §8.5): `webhook-signature` holds one
 * or more space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">`,
 * keyed by the base64-decoded part of the secret after `whsec_`; the timestamp must be within the
 * tolerance of now (replays); signatures are compared in constant time. Needs no API key, so a
 * receiver uses these without a client.
 */

export type WebhookVerificationCode =
  'missing_header' | 'invalid_timestamp' | 'timestamp_too_old' | 'timestamp_too_new' | 'invalid_signature' | 'invalid_secret' | 'invalid_payload';

/** A delivery that did not verify; `code` says why. Answer it with 4xx and do not act on it. */
export class WebhookVerificationError extends MediagateError {
  override readonly name: string = 'WebhookVerificationError';
  readonly code: WebhookVerificationCode;

  constructor(code: WebhookVerificationCode, message: string) {
    super(message);
    this.code = code;
  }
}

/** Headers as Fetch gives them, or as Node's `IncomingMessage.headers` does. */
export type WebhookHeaders = Headers | Readonly<Record<string, string | readonly string[] | undefined>>;

export interface VerifyOptions {
  /** Seconds the timestamp may differ from now; default 300 (5 minutes). */
  readonly tolerance?: number;
  /** Now, in Unix seconds (tests); default the clock. */
  readonly now?: number;
}

export const DEFAULT_WEBHOOK_TOLERANCE_S = 300;

function header(headers: WebhookHeaders, name: string): string | undefined {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const direct = headers[name] ?? Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  if (direct === undefined) return undefined;
  return typeof direct === 'string' ? direct : direct.join(' ');
}

/** The HMAC key: the base64 after `whsec_` (a secret without the prefix is taken as base64 whole). */
function secretKey(secret: string): Buffer {
  const encoded = secret.startsWith('whsec_') ? secret.slice('whsec_'.length) : secret;
  if (encoded === '' || !/^[A-Za-z0-9+/]+={0,2}$/.test(encoded)) {
    throw new WebhookVerificationError('invalid_secret', 'The webhook secret is not `whsec_` followed by base64.');
  }
  return Buffer.from(encoded, 'base64');
}

/** `v1,<base64>` of one message, as the service signs it. */
export function signWebhook(secret: string, id: string, timestamp: number, body: string | Uint8Array): string {
  const payload = Buffer.concat([Buffer.from(`${id}.${timestamp}.`), typeof body === 'string' ? Buffer.from(body) : Buffer.from(body)]);
  return `v1,${createHmac('sha256', secretKey(secret)).update(payload).digest('base64')}`;
}

/**
 * Throws a WebhookVerificationError unless `body` (the raw request body, exactly as received:
 * parse it only afterwards) carries a valid signature of `secret` with a fresh timestamp.
 */
export function verifyWebhook(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): void {
  const id = header(headers, 'webhook-id');
  const timestampText = header(headers, 'webhook-timestamp');
  const signatures = header(headers, 'webhook-signature');
  if (!id || !timestampText || !signatures) {
    throw new WebhookVerificationError('missing_header', 'A webhook-id, webhook-timestamp or webhook-signature header is missing.');
  }
  if (!/^[0-9]{1,12}$/.test(timestampText.trim())) throw new WebhookVerificationError('invalid_timestamp', 'webhook-timestamp is not Unix seconds.');
  const timestamp = Number(timestampText.trim());
  const now = options.now ?? Math.floor(Date.now() / 1000);
  const tolerance = options.tolerance ?? DEFAULT_WEBHOOK_TOLERANCE_S;
  if (timestamp < now - tolerance) throw new WebhookVerificationError('timestamp_too_old', 'The webhook timestamp is too old.');
  if (timestamp > now + tolerance) throw new WebhookVerificationError('timestamp_too_new', 'The webhook timestamp is in the future.');
  const expected = Buffer.from(signWebhook(secret, id, timestamp, body).slice('v1,'.length), 'base64');
  for (const candidate of signatures.split(' ')) {
    const [version, value] = candidate.split(',', 2);
    if (version !== 'v1' || value === undefined) continue;
    const given = Buffer.from(value, 'base64');
    if (given.length === expected.length && timingSafeEqual(given, expected)) return;
  }
  throw new WebhookVerificationError('invalid_signature', 'No webhook signature matches.');
}

/** `verifyWebhook`, then the parsed delivery `{type, timestamp, data}`. */
export function unwrapWebhook(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options: VerifyOptions = {}): WebhookEvent {
  verifyWebhook(body, headers, secret, options);
  let parsed: unknown;
  try {
    parsed = JSON.parse(typeof body === 'string' ? body : Buffer.from(body).toString('utf8')) as unknown;
  } catch {
    throw new WebhookVerificationError('invalid_payload', 'The webhook body is not JSON.');
  }
  if (!isWebhookEvent(parsed)) throw new WebhookVerificationError('invalid_payload', 'The webhook body is not {type, timestamp, data}.');
  return parsed;
}

function isWebhookEvent(value: unknown): value is WebhookEvent {
  if (typeof value !== 'object' || value === null) return false;
  const record: { readonly [key: string]: unknown } = { ...value };
  const type = record['type'];
  return (
    typeof type === 'string' &&
    /^(video|image)\.(completed|failed|cancelled)$/.test(type) &&
    (typeof record['timestamp'] === 'string' || typeof record['timestamp'] === 'number') &&
    typeof record['data'] === 'object' &&
    record['data'] !== null
  );
}
