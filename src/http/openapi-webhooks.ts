/**
 * The OpenAPI parts of webhooks (decisions 8.5): the endpoint operations, the delivery log, and
 * the top-level `webhooks` object (OpenAPI 3.1) describing the six events a receiver gets.
 * openapi.ts places them when the route table has the webhook routes.
 */
import { WEBHOOK_EVENTS } from '../webhooks/events.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json(ref('VideoError')) });
const webhookIdParam = { name: 'webhook_id', in: 'path', required: true, description: 'The endpoint id (`wh_...`).', schema: { type: 'string' } };

export const WEBHOOK_SCHEMAS = {
  WebhookEventType: { enum: [...WEBHOOK_EVENTS] },
  WebhookCreate: {
    type: 'object',
    required: ['url'],
    additionalProperties: false,
    properties: {
      url: {
        type: 'string',
        format: 'uri',
        maxLength: 2048,
        description:
          'An `https://` URL. Its host must pass the address policy of media inputs: names are resolved, and loopback, private, link-local and other non-public addresses are refused (unless the operator allowed them); the policy applies again on every connection.',
      },
      events: {
        type: 'array',
        minItems: 1,
        items: ref('WebhookEventType'),
        description: 'The events to receive; default all six.',
      },
    },
  },
  Webhook: {
    type: 'object',
    required: ['id', 'object', 'url', 'events', 'created_at'],
    properties: {
      id: { type: 'string', examples: ['wh_0Mx3Lk2a4bV9cD7eF1gH2iJ3kL4mN5oP6q'] },
      object: { const: 'webhook' },
      url: { type: 'string', format: 'uri' },
      events: { type: 'array', items: ref('WebhookEventType') },
      created_at: { type: 'integer', format: 'int64', description: 'Unix time, seconds.' },
    },
  },
  WebhookCreated: {
    allOf: [
      ref('Webhook'),
      {
        type: 'object',
        required: ['secret'],
        properties: {
          secret: {
            type: 'string',
            pattern: '^whsec_[A-Za-z0-9+/]+={0,2}$',
            description: 'The signing secret, shown only in this answer: `whsec_` and the base64 of 32 random bytes.',
          },
        },
      },
    ],
  },
  WebhookList: {
    type: 'object',
    required: ['object', 'data'],
    properties: { object: { const: 'list' }, data: { type: 'array', items: ref('Webhook') } },
  },
  WebhookDeleted: {
    type: 'object',
    required: ['id', 'object', 'deleted'],
    properties: { id: { type: 'string' }, object: { const: 'webhook' }, deleted: { const: true } },
  },
  WebhookDelivery: {
    type: 'object',
    required: [
      'id',
      'object',
      'webhook_id',
      'type',
      'task_id',
      'status',
      'attempts',
      'next_attempt_at',
      'last_status_code',
      'last_error',
      'created_at',
      'updated_at',
      'attempt_log',
    ],
    properties: {
      id: { type: 'string', description: 'The `webhook-id` header of every attempt of this event (`msg_...`).' },
      object: { const: 'webhook.delivery' },
      webhook_id: { type: 'string' },
      type: ref('WebhookEventType'),
      task_id: { type: 'string' },
      status: {
        enum: ['pending', 'succeeded', 'failed'],
        description: '`pending` while attempts remain (or one runs), `succeeded` after a 2xx, `failed` after the last attempt.',
      },
      attempts: { type: 'integer', minimum: 0, description: 'Attempts started so far.' },
      next_attempt_at: { type: ['integer', 'null'], format: 'int64', description: 'When pending: when the next attempt is due (Unix seconds).' },
      last_status_code: { type: ['integer', 'null'], description: 'The HTTP status of the last attempt; null when it got no answer.' },
      last_error: {
        type: ['string', 'null'],
        description:
          'Why the last attempt failed: `HTTP <status>`, `timeout: ...`, `network: ...`, `address_refused: ...` (the address policy), `bad_url: ...`; null after a success.',
      },
      created_at: { type: 'integer', format: 'int64' },
      updated_at: { type: 'integer', format: 'int64' },
      attempt_log: {
        type: 'array',
        description: 'Every attempt, oldest first (an attempt cut short by a crash of the service has no entry).',
        items: {
          type: 'object',
          required: ['attempt', 'at', 'status_code', 'error', 'duration_ms'],
          properties: {
            attempt: { type: 'integer', minimum: 1 },
            at: { type: 'integer', format: 'int64', description: 'When it started, Unix seconds.' },
            status_code: { type: ['integer', 'null'] },
            error: { type: ['string', 'null'] },
            duration_ms: { type: 'integer', minimum: 0 },
          },
        },
      },
    },
  },
  WebhookDeliveryList: {
    type: 'object',
    required: ['object', 'data', 'has_more', 'last_id'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: ref('WebhookDelivery') },
      has_more: { type: 'boolean' },
      last_id: { type: ['string', 'null'] },
    },
  },
  WebhookPayload: {
    type: 'object',
    required: ['type', 'timestamp', 'data'],
    properties: {
      type: ref('WebhookEventType'),
      timestamp: { type: 'string', description: 'When the task reached its final state, ISO 8601 (e.g. 2026-01-31T12:00:00.000Z).' },
      data: {
        description: 'The task exactly as a status poll returns it: a VideoTask for `video.*`, an ImageStatus envelope for `image.*`.',
        oneOf: [ref('VideoTask'), ref('ImageStatus')],
      },
    },
  },
} as const;

export const WEBHOOK_PATHS = {
  '/v1/webhooks': {
    post: {
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
    },
    get: {
      operationId: 'listWebhooks',
      summary: "List this key's webhook endpoints (without secrets)",
      responses: { '200': { description: 'The endpoints, oldest first', content: json(ref('WebhookList')) } },
    },
  },
  '/v1/webhooks/{webhook_id}': {
    delete: {
      operationId: 'deleteWebhook',
      summary: 'Remove a webhook endpoint',
      description: 'Its pending deliveries stop, and its delivery log goes with it.',
      parameters: [webhookIdParam],
      responses: {
        '200': { description: 'Removed', content: json(ref('WebhookDeleted')) },
        '404': error('webhook_not_found: unknown endpoint, or one of another API key (param webhook_id)'),
      },
    },
  },
  '/v1/webhooks/{webhook_id}/deliveries': {
    get: {
      operationId: 'listWebhookDeliveries',
      summary: "An endpoint's delivery log, newest first",
      parameters: [
        webhookIdParam,
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
        { name: 'after', in: 'query', required: false, description: 'A delivery id: the page starts right after it.', schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'One page of deliveries, each with its attempts', content: json(ref('WebhookDeliveryList')) },
        '400': error('invalid_parameter on `limit` or `after`'),
        '404': error('webhook_not_found (param webhook_id)'),
      },
    },
  },
  '/v1/webhooks/{webhook_id}/deliveries/{delivery_id}/redeliver': {
    post: {
      operationId: 'redeliverWebhook',
      summary: 'Send a delivery again now',
      description:
        'The delivery is due at once, with the same `webhook-id`; a failed one gets one more attempt (and the retries the schedule still has). No body is needed.',
      parameters: [webhookIdParam, { name: 'delivery_id', in: 'path', required: true, schema: { type: 'string' } }],
      responses: {
        '200': { description: 'The delivery, pending', content: json(ref('WebhookDelivery')) },
        '404': error('webhook_not_found (param webhook_id) or webhook_delivery_not_found (param delivery_id)'),
      },
    },
  },
} as const;

const header = (name: string, description: string, schema: object) => ({ name, in: 'header', required: true, description, schema });

/** The top-level `webhooks` object: one POST per event, as a receiver gets it. */
export function webhookEvents(): Record<string, unknown> {
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
