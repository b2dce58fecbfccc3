import { APIPromise, responseInfo } from './api-promise.js';
import { MediagateError } from './errors.js';
import { unexpectedResponse, type HttpCore, type HttpResult } from './http.js';
import { Page } from './pagination.js';
import type {
  RequestOptions,
  WebhookCreateParams,
  WebhookDelivery,
  WebhookDeliveryListParams,
  WebhookEndpoint,
  WebhookEndpointCreated,
  WebhookEvent,
} from './types.js';
import { unwrapWebhook, verifyWebhook, type VerifyOptions, type WebhookHeaders } from './webhook-signature.js';
import { isRecord } from './records.js';

const PATH = '/v1/webhooks';

function isEndpoint(value: unknown): value is WebhookEndpoint {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['url'] === 'string' && Array.isArray(value['events']);
}

function isCreated(value: unknown): value is WebhookEndpointCreated {
  return isEndpoint(value) && typeof value['secret'] === 'string';
}

/** The list as `{data: [...]}` (the video family's list shape) or a bare array. */
function endpoints(result: HttpResult): WebhookEndpoint[] {
  const body = result.body;
  const items = Array.isArray(body) ? body : isRecord(body) ? body['data'] : undefined;
  if (!Array.isArray(items) || !items.every(isEndpoint)) throw unexpectedResponse(result, 'a list of webhook endpoints');
  return items;
}

function isDelivery(value: unknown): value is WebhookDelivery {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['status'] === 'string' && Array.isArray(value['attempt_log']);
}

function isDeliveryList(value: unknown): value is { data: WebhookDelivery[]; has_more: boolean; last_id: string | null } {
  return isRecord(value) && Array.isArray(value['data']) && value['data'].every(isDelivery) && typeof value['has_more'] === 'boolean';
}

function endpointPath(id: string): string {
  if (id === '') throw new MediagateError('A webhook endpoint id is required.');
  return `${PATH}/${encodeURIComponent(id)}`;
}

/**
 * `client.webhooks`: the calling key's endpoints (decisions §8.5), and `verify`/`unwrap` for a
 * receiver (which need no API key: the same functions are exported as `verifyWebhook` and
 * `unwrapWebhook`).
 */
export class Webhooks {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /** Registers an endpoint; the answer's `secret` (`whsec_...`) is shown this once. */
  create(params: WebhookCreateParams, options?: RequestOptions): APIPromise<WebhookEndpointCreated> {
    const body = { url: params.url, ...(params.events !== undefined ? { events: params.events } : {}) };
    return new APIPromise(
      this.#http.request({ method: 'POST', path: PATH, body, idempotent: false }, options).then((result) => {
        if (!isCreated(result.body)) throw unexpectedResponse(result, 'a webhook endpoint {id, url, events, secret}');
        return { data: result.body, response: responseInfo(result.status, result.headers) };
      }),
    );
  }

  list(options?: RequestOptions): APIPromise<WebhookEndpoint[]> {
    return new APIPromise(
      this.#http
        .request({ method: 'GET', path: PATH, idempotent: true }, options)
        .then((result) => ({ data: endpoints(result), response: responseInfo(result.status, result.headers) })),
    );
  }

  /** Removes an endpoint; no further deliveries are made to it. */
  delete(id: string, options?: RequestOptions): APIPromise<void> {
    return new APIPromise(
      this.#http
        .request({ method: 'DELETE', path: endpointPath(id), idempotent: true }, options)
        .then((result) => ({ data: undefined, response: responseInfo(result.status, result.headers) })),
    );
  }

  /** One page of an endpoint's delivery log, newest first, each delivery with its attempts; iterate it for every page. */
  async deliveries(id: string, params: WebhookDeliveryListParams = {}, options?: RequestOptions): Promise<Page<WebhookDelivery>> {
    const result = await this.#http.request(
      { method: 'GET', path: `${endpointPath(id)}/deliveries`, query: { limit: params.limit, after: params.after }, idempotent: true },
      options,
    );
    if (!isDeliveryList(result.body)) throw unexpectedResponse(result, 'a list of webhook deliveries');
    return new Page({ data: result.body.data, hasMore: result.body.has_more, lastId: result.body.last_id }, (after) =>
      this.deliveries(id, { ...params, after }, options),
    );
  }

  /** Sends a delivery again now, with the same `webhook-id`; answers the delivery. */
  redeliver(id: string, deliveryId: string, options?: RequestOptions): APIPromise<WebhookDelivery> {
    if (deliveryId === '') throw new MediagateError('A delivery id is required.');
    return new APIPromise(
      this.#http
        .request({ method: 'POST', path: `${endpointPath(id)}/deliveries/${encodeURIComponent(deliveryId)}/redeliver`, idempotent: true }, options)
        .then((result) => {
          if (!isDelivery(result.body)) throw unexpectedResponse(result, 'a webhook delivery');
          return { data: result.body, response: responseInfo(result.status, result.headers) };
        }),
    );
  }

  /** Throws a WebhookVerificationError unless the raw `body` is signed by `secret` with a fresh timestamp. */
  verify(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options?: VerifyOptions): void {
    verifyWebhook(body, headers, secret, options);
  }

  /** `verify`, then the parsed delivery `{type, timestamp, data}`. */
  unwrap(body: string | Uint8Array, headers: WebhookHeaders, secret: string, options?: VerifyOptions): WebhookEvent {
    return unwrapWebhook(body, headers, secret, options);
  }
}
