/**
 * The OpenAPI side of the webhook rows (routes/webhooks.ts): the endpoint operations, the
 * delivery log, and the top-level `webhooks` (OpenAPI 3.1) describing the events a receiver
 * gets, which comes with the create row.
 */
import { WEBHOOK_EVENTS } from '../../webhooks/events.js';
import type { OpenApiOperation, RouteDocs } from '../route.js';
import { afterParam, errorAnswer, json, limitParam, ref } from './docs-parts.js';
import { WEBHOOK_SCHEMAS } from './webhooks-schemas.js';

const error = (description: string) => errorAnswer('VideoError', description);
const webhookIdParam = { name: 'webhook_id', in: 'path', required: true, description: 'The endpoint id (`wh_...`).', schema: { type: 'string' } };
const docs = (operation: OpenApiOperation): RouteDocs => ({ components: WEBHOOK_SCHEMAS, operation: () => operation });

const header = (name: string, description: string, schema: object) => ({ name, in: 'header', required: true, description, schema });

/** The top-level `webhooks` object: one POST per event, as a receiver gets it. */
function webhookEvents(): Record<string, unknown> {
  return Object.fromEntries(
    WEBHOOK_EVENTS.map((event) => {
      const [family, outcome] = event.split('.');
      return [
        event,
        {
          post: {
            operationId: `on_${event.replace('.', '_')}`,
            summary: `A ${family ?? ''} task ${outcome ?? ''}`,
            description:
              'Signed per Standard Webhooks. Answer 2xx within 15 s; anything else (a redirect included: none is followed) is retried with backoff and jitter, at least 8 attempts over at least 24 hours.',
            security: [],
            parameters: [
              header('webhook-id', 'The delivery id (`msg_...`): the same on every retry of this event; use it to drop duplicates.', { type: 'string' }),
              header('webhook-timestamp', 'Unix seconds when this attempt was signed; refuse one too far from now (replays).', {
                type: 'string',
                pattern: '^[0-9]+$',
              }),
              header(
                'webhook-signature',
                'Space-separated `v1,<base64 HMAC-SHA256 of "{webhook-id}.{webhook-timestamp}.{body}">` keyed by the base64-decoded part of the secret after `whsec_`.',
                { type: 'string' },
              ),
            ],
            requestBody: { required: true, content: json(ref('WebhookPayload')) },
            responses: {
              '200': { description: 'Received (any 2xx)' },
              '400': { description: 'Refused (for example a signature that does not verify): retried on the schedule' },
            },
          },
        },
      ];
    }),
  );
}

export const createWebhookDocs: RouteDocs = {
  ...docs({
    operationId: 'createWebhook',
    summary: 'Register a webhook endpoint',
    description:
      'Answers the endpoint with its signing `secret`, shown only here. At most `MEDIAGATE_WEBHOOK_MAX_ENDPOINTS` (default 20) endpoints per API key.',
    requestBody: { required: true, content: json(ref('WebhookCreate')) },
    responses: {
      '200': { description: 'The endpoint and its secret', content: json(ref('WebhookCreated')) },
      '400': error(
        'missing_parameter / invalid_parameter on `url` (not https, malformed, or refused by the address policy); invalid_parameter / unsupported_value on `events`; unsupported_parameter on an unknown field; invalid_parameter on `body`',
      ),
      '409': error('webhook_limit_reached: this key has the most endpoints it may have (param url)'),
      '413': error('Body larger than the configured cap'),
      '415': error('Content-Type is not application/json'),
    },
  }),
  webhooks: webhookEvents(),
};

export const listWebhooksDocs = docs({
  operationId: 'listWebhooks',
  summary: "List this key's webhook endpoints (without secrets)",
  responses: { '200': { description: 'The endpoints, oldest first', content: json(ref('WebhookList')) } },
});

export const deleteWebhookDocs = docs({
  operationId: 'deleteWebhook',
  summary: 'Remove a webhook endpoint',
  description: 'Its pending deliveries stop, and its delivery log goes with it.',
  parameters: [webhookIdParam],
  responses: {
    '200': { description: 'Removed', content: json(ref('WebhookDeleted')) },
    '404': error('webhook_not_found: unknown endpoint, or one of another API key (param webhook_id)'),
  },
});

export const listDeliveriesDocs = docs({
  operationId: 'listWebhookDeliveries',
  summary: "An endpoint's delivery log, newest first",
  parameters: [webhookIdParam, limitParam, afterParam('A delivery id: the page starts right after it.')],
  responses: {
    '200': { description: 'One page of deliveries, each with its attempts', content: json(ref('WebhookDeliveryList')) },
    '400': error('invalid_parameter on `limit` or `after`'),
    '404': error('webhook_not_found (param webhook_id)'),
  },
});

export const redeliverDocs = docs({
  operationId: 'redeliverWebhook',
  summary: 'Send a delivery again now',
  description:
    'The delivery is due at once, with the same `webhook-id`; a failed one gets one more attempt (and the retries the schedule still has). No body is needed.',
  parameters: [webhookIdParam, { name: 'delivery_id', in: 'path', required: true, schema: { type: 'string' } }],
  responses: {
    '200': { description: 'The delivery, pending', content: json(ref('WebhookDelivery')) },
    '404': error('webhook_not_found (param webhook_id) or webhook_delivery_not_found (param delivery_id)'),
  },
});
