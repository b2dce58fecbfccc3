/**
 * The OpenAPI side of the admin rows (routes/admin-keys.ts, routes/usage.ts; docs/admin.md):
 * `/v1/admin/keys` and the usage report across keys, all behind an admin key.
 */
import type { OpenApiOperation, RouteDocs } from '../route.js';
import { ADMIN_SCHEMAS } from './admin-schemas.js';
import { afterParam, errorAnswer, json, limitParam, ref } from './docs-parts.js';

const error = (description: string) => errorAnswer('VideoError', description);
const keyIdParam = { name: 'id', in: 'path', required: true, description: 'The key id (`key_...`).', schema: { type: 'string' } };
const docs = (operation: OpenApiOperation): RouteDocs => ({ components: ADMIN_SCHEMAS, operation: () => operation });

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

export const createAdminKeyDocs = docs({
  operationId: 'createAdminKey',
  summary: 'Create a client API key with its settings',
  requestBody: { required: true, content: json(ref('AdminKeyCreate')) },
  responses: { '201': { description: 'The key, with `key` shown only here', content: json(ref('AdminKeyCreated')) }, ...BODY_REFUSALS, ...ADMIN_REFUSALS },
});

export const listAdminKeysDocs = docs({
  operationId: 'listAdminKeys',
  summary: 'List client API keys (not revoked), newest first',
  parameters: [limitParam, afterParam("A key id (the previous page's `last_id`): the page starts right after it.")],
  responses: {
    '200': { description: 'One page of keys', content: json(ref('AdminKeyList')) },
    '400': error('invalid_parameter on `limit` or `after`'),
    ...ADMIN_REFUSALS,
  },
});

export const getAdminKeyDocs = docs({
  operationId: 'getAdminKey',
  summary: 'A client API key, with what it spent and holds in its current budget period',
  parameters: [keyIdParam],
  responses: { '200': { description: 'The key', content: json(ref('AdminKey')) }, ...ADMIN_REFUSALS },
});

export const patchAdminKeyDocs = docs({
  operationId: 'updateAdminKey',
  summary: "Change a key's settings, or disable it",
  description:
    'Only the fields sent change. Every API process applies the change within 5 s. A changed `budget_period` recomputes `spent` for the current period of the new kind.',
  parameters: [keyIdParam],
  requestBody: { required: true, content: json(ref('AdminKeyPatch')) },
  responses: { '200': { description: 'The key as GET shows it', content: json(ref('AdminKey')) }, ...BODY_REFUSALS, ...ADMIN_REFUSALS },
});

export const deleteAdminKeyDocs = docs({
  operationId: 'deleteAdminKey',
  summary: 'Revoke a client API key (refused on every process within 5 s)',
  parameters: [keyIdParam],
  responses: { '200': { description: 'Revoked', content: json(ref('AdminKeyDeleted')) }, ...ADMIN_REFUSALS },
});

export const adminUsageDocs = docs({
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
});
