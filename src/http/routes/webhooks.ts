import type { FastifyRequest } from 'fastify';
import { errors } from '../../errors.js';
import type { WebhookEndpointRecord } from '../../store/store.js';
import { registerWebhookEndpoint } from '../../webhooks/endpoints.js';
import { webhookDeliveryBody, webhookEndpointBody, webhookEndpointCreatedBody } from '../../wire/webhooks.js';
import { pathParam, type DepsOf, type Handler } from '../route.js';
import { pageLimit, queryValue } from './task-ops.js';
import { requireJsonBody } from './tasks.js';

/** The webhooks module's: the store's endpoint and delivery rows, the endpoint rules and the dispatcher's wake-up. */
type WebhookDeps = DepsOf<'store' | 'webhooks'>;

/*
 * Webhook endpoints of the calling key: register, list, delete, the delivery log and a manual
 * redelivery. The video family's envelope (the path is not under /v1/images). What an endpoint
 * may be (fields, events, URL policy, how many) is webhooks/endpoints.ts; the bodies are
 * wire/webhooks.ts.
 */

const ENDPOINT_ID = /^wh_[A-Za-z0-9_-]{30}$/;
const DELIVERY_ID = /^msg_[A-Za-z0-9_-]{30}$/;

/** `POST /v1/webhooks` `{url, events?}`: the endpoint and its secret, shown this once. */
export function createWebhook(deps: WebhookDeps): Handler {
  return async (request) => {
    const body = requireJsonBody(request);
    const endpoint = await registerWebhookEndpoint(deps.ctx.store, request.owner, body, deps.ctx.webhooks ?? {});
    return webhookEndpointCreatedBody(endpoint);
  };
}

/** `GET /v1/webhooks`: the key's endpoints, oldest first, without secrets. */
export function listWebhooks(deps: WebhookDeps): Handler {
  return async (request) => ({ object: 'list', data: (await deps.ctx.store.listWebhookEndpoints(request.owner)).map(webhookEndpointBody) });
}

async function requireEndpoint(deps: WebhookDeps, request: FastifyRequest): Promise<WebhookEndpointRecord> {
  const id = pathParam(request, 'webhook_id');
  const endpoint = ENDPOINT_ID.test(id) ? await deps.ctx.store.getWebhookEndpoint(id, request.owner) : undefined;
  if (endpoint === undefined) throw errors.webhookNotFound(id);
  return endpoint;
}

/** `DELETE /v1/webhooks/{webhook_id}`: the endpoint and its pending deliveries go. */
export function deleteWebhook(deps: WebhookDeps): Handler {
  return async (request) => {
    const id = pathParam(request, 'webhook_id');
    if (!ENDPOINT_ID.test(id) || !(await deps.ctx.store.deleteWebhookEndpoint(id, request.owner))) throw errors.webhookNotFound(id);
    return { id, object: 'webhook', deleted: true };
  };
}

/** `GET /v1/webhooks/{webhook_id}/deliveries`: newest first, `limit` (1-100, default 20) and `after`. */
export function listWebhookDeliveries(deps: WebhookDeps): Handler {
  return async (request) => {
    const limit = pageLimit(request);
    const after = queryValue(request, 'after');
    if (after !== undefined && !DELIVERY_ID.test(after)) throw errors.invalidQuery('after', 'after must be the id of a delivery (msg_...).');
    const endpoint = await requireEndpoint(deps, request);
    const rows = await deps.ctx.store.listWebhookDeliveries(endpoint.id, after, limit + 1);
    const page = rows.slice(0, limit);
    return {
      object: 'list',
      data: page.map(({ delivery, attempts }) => webhookDeliveryBody(delivery, attempts)),
      has_more: rows.length > limit,
      last_id: page.at(-1)?.delivery.id ?? null,
    };
  };
}

/** `POST /v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver`: due again now, same `webhook-id`. */
export function redeliverWebhook(deps: WebhookDeps): Handler {
  return async (request) => {
    const endpoint = await requireEndpoint(deps, request);
    const id = pathParam(request, 'delivery_id');
    const { store } = deps.ctx;
    if (!DELIVERY_ID.test(id) || (await store.getWebhookDelivery(id, endpoint.id)) === undefined) throw errors.webhookDeliveryNotFound(id);
    // False while an attempt holds it: that attempt is the redelivery.
    if (await store.redeliverWebhook(id, endpoint.id, Date.now())) deps.ctx.webhooks?.notify?.();
    const [page] = await store.listWebhookDeliveries(endpoint.id, afterOf(id), 1);
    if (page === undefined || page.delivery.id !== id) throw errors.webhookDeliveryNotFound(id);
    return webhookDeliveryBody(page.delivery, page.attempts);
  };
}

/** The cursor just above `id` (ids have one length), so that a page of one is that delivery. */
function afterOf(id: string): string {
  return `${id}~`;
}
