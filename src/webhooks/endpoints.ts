import { errors, validationError } from '../errors.js';
import type { FetchAllowList } from '../outbound/address-policy.js';
import { FetchError } from '../outbound/client.js';
import { assertPublicUrl, type Resolve } from '../outbound/url-refusal.js';
import type { WebhookEndpointRecord, WebhookStore } from '../store/store.js';
import { newSortableId } from '../tasks/ids.js';
import { isWebhookEvent, WEBHOOK_EVENTS } from './events.js';
import { newWebhookSecret } from './signing.js';

/*
 * The rules of a webhook endpoint, whoever registers it: which fields, which events, which URLs
 * (the address policy of media inputs), and how many per API key. The route (http/routes/webhooks.ts)
 * only reads the request and writes the answer.
 */

/** How endpoints are checked; the operator's settings. */
export interface WebhookEndpointPolicy {
  /** MEDIAGATE_WEBHOOK_MAX_ENDPOINTS; default 20. */
  readonly maxEndpoints?: number;
  /** The media inputs' allow list: an endpoint URL passes the same address policy. */
  readonly allow?: FetchAllowList;
  /** DNS resolution of the URL's host at registration (tests); default the system resolver. */
  readonly resolve?: Resolve;
}

export const DEFAULT_MAX_ENDPOINTS = 20;
const MAX_URL_LENGTH = 2048;
const FIELDS = ['url', 'events'];

/** `events`: absent = all six; else a non-empty array of the six names (kept in their canonical order). */
function parseEvents(value: unknown): string[] {
  if (value === undefined) return [...WEBHOOK_EVENTS];
  const items: readonly unknown[] = Array.isArray(value) ? value : [];
  if (!Array.isArray(value) || items.length === 0 || items.length > 20 || items.some((item) => typeof item !== 'string')) {
    throw validationError('invalid_parameter', 'events', `events must be a non-empty array of event names (${WEBHOOK_EVENTS.join(', ')}).`);
  }
  const unknown = items.find((item): item is string => typeof item === 'string' && !isWebhookEvent(item));
  if (unknown !== undefined) {
    throw validationError('unsupported_value', 'events', `events: '${unknown.slice(0, 100)}' is not one of ${WEBHOOK_EVENTS.join(', ')}.`);
  }
  return WEBHOOK_EVENTS.filter((event) => items.includes(event));
}

/** The URL rules and the address policy of media inputs; the 400 names `url` whatever failed. */
async function checkUrl(value: unknown, policy: WebhookEndpointPolicy): Promise<string> {
  if (value === undefined) throw validationError('missing_parameter', 'url', 'url is required: the https:// address deliveries are POSTed to.');
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
    throw validationError('invalid_parameter', 'url', `url must be an https:// URL of at most ${MAX_URL_LENGTH} characters.`);
  }
  let url: string;
  try {
    url = withoutTrailingDot(value);
    await assertPublicUrl(url, policy.allow ?? {}, ...(policy.resolve ? [policy.resolve] : []));
  } catch (error) {
    if (error instanceof FetchError) throw validationError('invalid_parameter', 'url', `url is refused: ${error.message}.`);
    throw error;
  }
  return url;
}

/**
 * The URL with its host's trailing dot dropped (`localhost.` is `localhost`): the allow-list
 * compares hosts without it, so the URL we keep and deliver to must be the host that was
 * checked (a dotted name would pass the check and then meet a resolver and a TLS name that
 * differ). Anything unparsable is left for assertPublicUrl to refuse.
 */
function withoutTrailingDot(value: string): string {
  let url: URL;
  try {
    url = new URL(value);
  } catch {
    return value;
  }
  if (url.hostname.length > 1 && url.hostname.endsWith('.')) url.hostname = url.hostname.replace(/\.+$/, '');
  return url.href;
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Registers an endpoint `{url, events?}` for `owner`: the fields checked in this order (unknown
 * field, events, url), then the key's limit. Returns the stored endpoint, its secret included.
 */
export async function registerWebhookEndpoint(
  store: WebhookStore,
  owner: string,
  body: unknown,
  policy: WebhookEndpointPolicy,
): Promise<WebhookEndpointRecord> {
  if (!isRecord(body)) throw validationError('invalid_parameter', 'body', 'The body must be a JSON object {url, events?}.');
  const extra = Object.keys(body).find((key) => !FIELDS.includes(key));
  if (extra !== undefined)
    throw validationError('unsupported_parameter', extra, `'${extra.slice(0, 100)}' is not a parameter of a webhook endpoint (url, events).`);
  const events = parseEvents(body['events']);
  const url = await checkUrl(body['url'], policy);
  const limit = policy.maxEndpoints ?? DEFAULT_MAX_ENDPOINTS;
  if ((await store.countWebhookEndpoints(owner)) >= limit) throw errors.webhookLimitReached(limit);
  const endpoint: WebhookEndpointRecord = { id: newSortableId('wh'), owner, url, events, secret: newWebhookSecret(), createdAt: Date.now() };
  await store.insertWebhookEndpoint(endpoint);
  return endpoint;
}
