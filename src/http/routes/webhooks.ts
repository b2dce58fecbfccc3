import type { FastifyRequest } from 'fastify';
import { errors, validationError } from '../../errors.js';
import { FetchError } from '../../outbound/client.js';
import { assertPublicUrl } from '../../outbound/url-refusal.js';
import type { WebhookAttemptRecord, WebhookDeliveryRecord, WebhookEndpointRecord } from '../../store/store.js';
import { newSortableId } from '../../tasks/ids.js';
import { isWebhookEvent, WEBHOOK_EVENTS } from '../../webhooks/events.js';
import { newWebhookSecret } from '../../webhooks/signing.js';
import { seconds } from '../envelopes.js';
import { pathParam, type Handler, type RouteDeps } from '../route.js';
import { pageLimit, queryValue } from './task-ops.js';
import { requireJsonBody } from './tasks.js';

/*
 * Webhook endpoints of the calling key (decisions 8.5): register, list, delete, the delivery log
 * and a manual redelivery. The video family's envelope (the path is not under /v1/images).
 */

const DEFAULT_MAX_ENDPOINTS = 20;
const MAX_URL_LENGTH = 2048;
const ENDPOINT_ID = /^wh_[A-Za-z0-9_-]{30}$/;
const DELIVERY_ID = /^msg_[A-Za-z0-9_-]{30}$/;

export interface WebhookBody {
  id: string;
  object: 'webhook';
  url: string;
  events: string[];
  created_at: number;
}

function endpointBody(endpoint: WebhookEndpointRecord): WebhookBody {
  return { id: endpoint.id, object: 'webhook', url: endpoint.url, events: [...endpoint.events], created_at: seconds(endpoint.createdAt) };
}

function deliveryBody(delivery: WebhookDeliveryRecord, attempts: readonly WebhookAttemptRecord[]): object {
  return {
    id: delivery.id,
    object: 'webhook.delivery',
    webhook_id: delivery.endpointId,
    type: delivery.type,
    task_id: delivery.taskId,
    status: delivery.status,
    attempts: delivery.attempts,
    next_attempt_at: delivery.status === 'pending' && delivery.nextAttemptAt !== null ? seconds(delivery.nextAttemptAt) : null,
    last_status_code: delivery.lastStatusCode,
    last_error: delivery.lastError,
    created_at: seconds(delivery.createdAt),
    updated_at: seconds(delivery.updatedAt),
    attempt_log: attempts.map((attempt) => ({
      attempt: attempt.attempt,
      at: seconds(attempt.at),
      status_code: attempt.statusCode,
      error: attempt.error,
      duration_ms: attempt.durationMs,
    })),
  };
}

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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
async function checkUrl(value: unknown, deps: RouteDeps): Promise<string> {
  if (value === undefined) throw validationError('missing_parameter', 'url', 'url is required: the https:// address deliveries are POSTed to.');
  if (typeof value !== 'string' || value.length === 0 || value.length > MAX_URL_LENGTH) {
    throw validationError('invalid_parameter', 'url', `url must be an https:// URL of at most ${MAX_URL_LENGTH} characters.`);
  }
  const options = deps.ctx.webhooks;
  let url: string;
  try {
    url = withoutTrailingDot(value);
    await assertPublicUrl(url, options?.allow ?? {}, ...(options?.resolve ? [options.resolve] : []));
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

/** `POST /v1/webhooks` `{url, events?}`: the endpoint and its secret, shown this once. */
export function createWebhook(deps: RouteDeps): Handler {
  return async (request) => {
    const body = requireJsonBody(request);
    if (!isRecord(body)) throw validationError('invalid_parameter', 'body', 'The body must be a JSON object {url, events?}.');
    const extra = Object.keys(body).find((key) => key !== 'url' && key !== 'events');
    if (extra !== undefined)
      throw validationError('unsupported_parameter', extra, `'${extra.slice(0, 100)}' is not a parameter of a webhook endpoint (url, events).`);
    const events = parseEvents(body['events']);
    const url = await checkUrl(body['url'], deps);
    const { store } = deps.ctx;
    const limit = deps.ctx.webhooks?.maxEndpoints ?? DEFAULT_MAX_ENDPOINTS;
    if ((await store.countWebhookEndpoints(request.owner)) >= limit) throw errors.webhookLimitReached(limit);
    const endpoint: WebhookEndpointRecord = { id: newSortableId('wh'), owner: request.owner, url, events, secret: newWebhookSecret(), createdAt: Date.now() };
    await store.insertWebhookEndpoint(endpoint);
    return { ...endpointBody(endpoint), secret: endpoint.secret };
  };
}

/** `GET /v1/webhooks`: the key's endpoints, oldest first, without secrets. */
export function listWebhooks(deps: RouteDeps): Handler {
  return async (request) => ({ object: 'list', data: (await deps.ctx.store.listWebhookEndpoints(request.owner)).map(endpointBody) });
}

async function requireEndpoint(deps: RouteDeps, request: FastifyRequest): Promise<WebhookEndpointRecord> {
  const id = pathParam(request, 'webhook_id');
  const endpoint = ENDPOINT_ID.test(id) ? await deps.ctx.store.getWebhookEndpoint(id, request.owner) : undefined;
  if (endpoint === undefined) throw errors.webhookNotFound(id);
  return endpoint;
}

/** `DELETE /v1/webhooks/{webhook_id}`: the endpoint and its pending deliveries go. */
export function deleteWebhook(deps: RouteDeps): Handler {
  return async (request) => {
    const id = pathParam(request, 'webhook_id');
    if (!ENDPOINT_ID.test(id) || !(await deps.ctx.store.deleteWebhookEndpoint(id, request.owner))) throw errors.webhookNotFound(id);
    return { id, object: 'webhook', deleted: true };
  };
}

/** `GET /v1/webhooks/{webhook_id}/deliveries`: newest first, `limit` (1-100, default 20) and `after`. */
export function listWebhookDeliveries(deps: RouteDeps): Handler {
  return async (request) => {
    const limit = pageLimit(request);
    const after = queryValue(request, 'after');
    if (after !== undefined && !DELIVERY_ID.test(after)) throw errors.invalidQuery('after', 'after must be the id of a delivery (msg_...).');
    const endpoint = await requireEndpoint(deps, request);
    const rows = await deps.ctx.store.listWebhookDeliveries(endpoint.id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      object: 'list',
      data: page.map(({ delivery, attempts }) => deliveryBody(delivery, attempts)),
      has_more: rows.length > limit,
      last_id: page.at(-1)?.delivery.id ?? null,
    };
  };
}

/** `POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver`: due again now, same `webhook-id`. */
export function redeliverWebhook(deps: RouteDeps): Handler {
  return async (request) => {
    const endpoint = await requireEndpoint(deps, request);
    const id = pathParam(request, 'delivery_id');
    const { store } = deps.ctx;
    if (!DELIVERY_ID.test(id) || (await store.getWebhookDelivery(id, endpoint.id)) === undefined) throw errors.webhookDeliveryNotFound(id);
    // False while an attempt holds it: that attempt is the redelivery.
    if (await store.redeliverWebhook(id, endpoint.id, Date.now())) deps.ctx.webhooks?.notify?.();
    const [page] = await store.listWebhookDeliveries(endpoint.id, afterOf(id), 1);
    if (page === undefined || page.delivery.id !== id) throw errors.webhookDeliveryNotFound(id);
    return deliveryBody(page.delivery, page.attempts);
  };
}

/** The cursor just above `id` (ids have one length), so that a page of one is that delivery. */
function afterOf(id: string): string {
  return `${id}~`;
}
