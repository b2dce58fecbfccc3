/**
 * The OpenAPI parts of cancel, list and idempotent creates (decisions §8):
 * openapi.ts places them on their paths. The web console feature-detects list and cancel
 * through these paths.
 */

import { IMAGE_STATUSES, VIDEO_STATUSES } from '../wire/task-bodies.js';

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const taskIdParam = { name: 'task_id', in: 'path', required: true, schema: { type: 'string' } };

export const TASK_OPS_SCHEMAS = {
  VideoTaskList: {
    type: 'object',
    required: ['object', 'data', 'has_more', 'last_id'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: ref('VideoTask') },
      has_more: { type: 'boolean' },
      last_id: { type: ['string', 'null'], description: 'The id of the last item (null when empty): the next page\u2019s `after`.' },
    },
  },
  ImageTaskList: {
    type: 'object',
    required: ['code', 'message', 'data'],
    properties: {
      code: { const: 'success' },
      message: { const: '' },
      data: {
        type: 'object',
        required: ['items', 'has_more', 'last_id'],
        properties: {
          items: { type: 'array', items: { type: 'object', description: 'The `data` of an image status envelope.' } },
          has_more: { type: 'boolean' },
          last_id: { type: ['string', 'null'] },
        },
      },
    },
  },
} as const;

/** The `Idempotency-Key` request header of both creates. */
export const IDEMPOTENCY_KEY_PARAM = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description:
    'Makes the create safe to retry for 24 hours per API key: the same key with the same body answers 200 with the original task (current state) and `Idempotent-Replayed: true`, creating nothing; with another body 422 `idempotency_key_reused`; while the first request is still being processed 409 `idempotency_key_in_use`. A request refused by validation does not take the key.',
  schema: { type: 'string', minLength: 1, maxLength: 255, pattern: '^[\\x20-\\x7e]+$' },
};

/** Responses a create gains with `Idempotency-Key`. */
export function idempotencyResponses(errorSchema: string) {
  return {
    '409': { description: 'idempotency_key_in_use: the first request with this key is still being processed', content: json(ref(errorSchema)) },
    '422': { description: 'idempotency_key_reused: this key was used with another request body', content: json(ref(errorSchema)) },
  };
}

/** The header on a replayed create's 200. */
export const REPLAYED_HEADER = {
  'Idempotent-Replayed': { description: '`true` when the answer is a replay of an earlier create with the same Idempotency-Key.', schema: { const: 'true' } },
};

function listParams(statuses: readonly string[], family: string) {
  return [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
    {
      name: 'after',
      in: 'query',
      required: false,
      description: `The id of a ${family} task of this key: the page starts right after it.`,
      schema: { type: 'string' },
    },
    { name: 'status', in: 'query', required: false, schema: { enum: statuses } },
    { name: 'model', in: 'query', required: false, description: `A ${family} model id.`, schema: { type: 'string' } },
  ];
}

function listOperation(operationId: string, family: 'video' | 'image', statuses: readonly string[], listSchema: string, errorSchema: string) {
  const error = (description: string) => ({ description, content: json(ref(errorSchema)) });
  return {
    operationId,
    summary: `List this key's ${family} tasks, newest first`,
    parameters: listParams(statuses, family),
    responses: {
      '200': { description: 'One page', content: json(ref(listSchema)) },
      '400': error('invalid_parameter (bad limit or after) or unsupported_value (unknown status or model); param is the query field'),
      '401': error('Missing or invalid API key'),
    },
  };
}

function cancelOperation(operationId: string, family: 'video' | 'image', taskSchema: string, errorSchema: string) {
  const error = (description: string) => ({ description, content: json(ref(errorSchema)) });
  return {
    operationId,
    summary: `Cancel a queued or running ${family} task`,
    description: 'No body is needed. Cancelling a cancelled task answers it again.',
    parameters: [taskIdParam],
    responses: {
      '200': {
        description: family === 'video' ? 'The task, status `cancelled`' : 'Status envelope, `data.status` `CANCELLED`',
        content: json(ref(taskSchema)),
      },
      '401': error('Missing or invalid API key'),
      '404': error('task_not_found: unknown task, or a task of another API key'),
      '409': error('task_not_cancellable: the task is completed or failed (param task_id)'),
    },
  };
}

export const listVideos = listOperation('listVideos', 'video', VIDEO_STATUSES, 'VideoTaskList', 'VideoError');
export const listImages = listOperation('listImages', 'image', IMAGE_STATUSES, 'ImageTaskList', 'ImageError');

export const cancelVideo = cancelOperation('cancelVideo', 'video', 'VideoTask', 'VideoError');
export const cancelImage = cancelOperation('cancelImage', 'image', 'ImageStatus', 'ImageError');
