/**
 * The component schemas of the webhook rows (routes/webhooks-docs.ts): an endpoint, a delivery
 * with its attempts, and the payload a receiver gets (its `data` the task as a poll returns it).
 */
import { WEBHOOK_EVENTS } from '../../webhooks/events.js';
import { ref } from './docs-parts.js';

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
