/**
 * The component schemas of the admin rows (routes/admin-docs.ts): a client key's settings as
 * created, patched and shown, and the usage report across keys.
 */
import { MAX_LIMIT, MAX_MODEL_PATTERNS, MAX_NAME_CHARS } from '../../auth/key-settings.js';
import { ref } from './docs-parts.js';

const amount = (description: string) => ({ type: 'number', minimum: 0, multipleOf: 0.000001, description });
const limit = (description: string) => ({ type: ['integer', 'null'], minimum: 1, maximum: MAX_LIMIT, description });

const SETTINGS = {
  name: { type: 'string', minLength: 1, maxLength: MAX_NAME_CHARS, description: `A label: 1-${MAX_NAME_CHARS} characters, no control characters.` },
  budget: {
    oneOf: [amount('In the pricing currency, at most 6 decimals, at most 1,000,000,000.'), { type: 'null' }],
    description: 'null: no budget.',
  },
  budget_period: { enum: ['day', 'month', null], description: 'UTC calendar days or months; null: a lifetime budget.' },
  models: {
    type: ['array', 'null'],
    maxItems: MAX_MODEL_PATTERNS,
    items: { type: 'string', minLength: 1, description: "A model id, or a prefix ending in '*' (`vendora/*`); each must match a model." },
    description: 'The models the key may use; null: every model.',
  },
  rate_limit_per_min: limit("Requests per minute for this key; null: the server's default (MEDIAGATE_RATE_LIMIT_PER_MIN)."),
  max_tasks_in_flight: limit("Queued + processing tasks for this key; null: the server's default (MEDIAGATE_MAX_TASKS_IN_FLIGHT)."),
};

export const ADMIN_SCHEMAS = {
  AdminKeyCreate: { type: 'object', required: ['name'], additionalProperties: false, properties: SETTINGS },
  AdminKeyPatch: {
    type: 'object',
    additionalProperties: false,
    properties: { ...SETTINGS, disabled: { type: 'boolean', description: 'A disabled key is refused (401) until enabled again.' } },
  },
  AdminKey: {
    type: 'object',
    required: [
      'id',
      'object',
      'name',
      'budget',
      'budget_period',
      'models',
      'rate_limit_per_min',
      'max_tasks_in_flight',
      'created_at',
      'disabled',
      'spent',
      'reserved',
    ],
    properties: {
      id: { type: 'string', examples: ['key_3f9a0c1d2e4b5a69'] },
      object: { const: 'key' },
      ...SETTINGS,
      budget: { type: ['number', 'null'] },
      created_at: { type: 'integer', format: 'int64', description: 'Unix time, seconds.' },
      disabled: { type: 'boolean' },
      spent: amount('What its tasks final in the current budget period cost (all time for a lifetime budget).'),
      reserved: amount('What its queued and processing tasks hold against the budget.'),
    },
  },
  AdminKeyCreated: {
    allOf: [
      ref('AdminKey'),
      {
        type: 'object',
        required: ['key'],
        properties: { key: { type: 'string', pattern: '^mg_[0-9A-Za-z]{36}$', description: 'The key itself, shown only in this answer.' } },
      },
    ],
  },
  AdminKeyList: {
    type: 'object',
    required: ['object', 'data', 'has_more', 'last_id'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: ref('AdminKey') },
      has_more: { type: 'boolean' },
      last_id: { type: ['string', 'null'] },
    },
  },
  AdminKeyDeleted: {
    type: 'object',
    required: ['id', 'object', 'deleted'],
    properties: { id: { type: 'string' }, object: { const: 'key' }, deleted: { const: true } },
  },
  AdminUsage: {
    type: 'object',
    required: ['object', 'currency', 'start', 'end', 'totals', 'data'],
    properties: {
      object: { const: 'usage' },
      currency: { type: 'string' },
      start: { type: 'integer', format: 'int64', description: 'Start of the first UTC day covered, Unix seconds.' },
      end: { type: 'integer', format: 'int64', description: 'End of the last UTC day covered, Unix seconds.' },
      totals: {
        type: 'object',
        required: ['tasks', 'seconds', 'images', 'cost'],
        properties: { tasks: { type: 'integer' }, seconds: { type: 'integer' }, images: { type: 'integer' }, cost: { type: 'number' } },
      },
      data: {
        type: 'array',
        items: {
          type: 'object',
          required: ['key_id', 'model', 'day', 'tasks', 'seconds', 'images', 'cost'],
          properties: {
            key_id: { type: ['string', 'null'], description: 'null unless grouped by key.' },
            model: { type: ['string', 'null'], description: 'null unless grouped by model.' },
            day: { type: ['string', 'null'], description: '`YYYY-MM-DD` (UTC); null unless grouped by day.' },
            tasks: { type: 'integer' },
            seconds: { type: 'integer' },
            images: { type: 'integer' },
            cost: { type: 'number' },
          },
        },
      },
    },
  },
} as const;
