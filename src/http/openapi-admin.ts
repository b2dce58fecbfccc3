/**
 * The OpenAPI parts of the admin API (docs/admin.md): `/v1/admin/keys` and the usage report
 * across keys, all behind an admin key. openapi.ts places them when the route table has the
 * admin routes.
 */
import { MAX_LIMIT, MAX_MODEL_PATTERNS, MAX_NAME_CHARS } from '../auth/key-settings.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json(ref('VideoError')) });
const keyIdParam = { name: 'id', in: 'path', required: true, description: 'The key id (`key_...`).', schema: { type: 'string' } };
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

/** Responses of every admin operation besides its own: the admin key's refusals. */
const ADMIN_REFUSALS = {
  '403': error('admin_key_required: a client key was sent (param Authorization)'),
  '404': error('key_not_found for an unknown key id (param id); not_found on every admin path while no admin key exists'),
};

const BODY_REFUSALS = {
  '400': error(
    'missing_parameter (`name` on create), unsupported_parameter (an unknown field), invalid_parameter (a wrong type, a fractional limit, a budget with more than 6 decimals, `body` not an object), unsupported_value (a negative budget, an unknown period, a model pattern matching no model, a limit out of range, a name too long); param names the field',
  ),
  '413': error('Body larger than the configured cap'),
  '415': error('Content-Type is not application/json'),
};

export const ADMIN_PATHS = {
  '/v1/admin/keys': {
    post: {
      operationId: 'createAdminKey',
      summary: 'Create a client API key with its settings',
      requestBody: { required: true, content: json(ref('AdminKeyCreate')) },
      responses: { '201': { description: 'The key, with `key` shown only here', content: json(ref('AdminKeyCreated')) }, ...BODY_REFUSALS, ...ADMIN_REFUSALS },
    },
    get: {
      operationId: 'listAdminKeys',
      summary: 'List client API keys (not revoked), newest first',
      parameters: [
        { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
        {
          name: 'after',
          in: 'query',
          required: false,
          description: "A key id (the previous page's `last_id`): the page starts right after it.",
          schema: { type: 'string' },
        },
      ],
      responses: {
        '200': { description: 'One page of keys', content: json(ref('AdminKeyList')) },
        '400': error('invalid_parameter on `limit` or `after`'),
        ...ADMIN_REFUSALS,
      },
    },
  },
  '/v1/admin/keys/{id}': {
    get: {
      operationId: 'getAdminKey',
      summary: 'A client API key, with what it spent and holds in its current budget period',
      parameters: [keyIdParam],
      responses: { '200': { description: 'The key', content: json(ref('AdminKey')) }, ...ADMIN_REFUSALS },
    },
    patch: {
      operationId: 'updateAdminKey',
      summary: "Change a key's settings, or disable it",
      description:
        'Only the fields sent change. Every API process applies the change within 5 s. A changed `budget_period` recomputes `spent` for the current period of the new kind.',
      parameters: [keyIdParam],
      requestBody: { required: true, content: json(ref('AdminKeyPatch')) },
      responses: { '200': { description: 'The key as GET shows it', content: json(ref('AdminKey')) }, ...BODY_REFUSALS, ...ADMIN_REFUSALS },
    },
    delete: {
      operationId: 'deleteAdminKey',
      summary: 'Revoke a client API key (refused on every process within 5 s)',
      parameters: [keyIdParam],
      responses: { '200': { description: 'Revoked', content: json(ref('AdminKeyDeleted')) }, ...ADMIN_REFUSALS },
    },
  },
  '/v1/admin/usage': {
    get: {
      operationId: 'getAdminUsage',
      summary: 'Usage across keys over whole UTC days',
      parameters: [
        { name: 'start', in: 'query', required: false, description: 'Unix seconds; default 30 days before `end`.', schema: { type: 'integer' } },
        { name: 'end', in: 'query', required: false, description: 'Unix seconds; default now.', schema: { type: 'integer' } },
        {
          name: 'group_by',
          in: 'query',
          required: false,
          description: 'One or more of `key`, `model`, `day`, comma-separated; default `key,model,day`.',
          schema: { type: 'string' },
        },
        { name: 'key_id', in: 'query', required: false, description: 'Only this key.', schema: { type: 'string' } },
      ],
      responses: {
        '200': { description: 'The report', content: json(ref('AdminUsage')) },
        '400': error('invalid_parameter on `start`, `end`, `group_by` or `key_id`'),
        ...ADMIN_REFUSALS,
      },
    },
  },
} as const;
