/**
 * The OpenAPI side of the list and cancel rows (routes/task-ops.ts). The web console
 * feature-detects list and cancel through these operations.
 */
import { IMAGE_STATUSES, VIDEO_STATUSES } from '../../wire/task-bodies.js';
import type { RouteDocs } from '../route.js';
import { afterParam, errorAnswer, json, limitParam, ref, taskIdParam } from './docs-parts.js';

type Kind = 'video' | 'image';

const LIST_SCHEMAS = {
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

export const listDocs = (kind: Kind): RouteDocs => ({
  components: LIST_SCHEMAS,
  operation: () => ({
    operationId: kind === 'video' ? 'listVideos' : 'listImages',
    summary: `List this key's ${kind} tasks, newest first`,
    parameters: [
      limitParam,
      afterParam(`The id of a ${kind} task of this key: the page starts right after it.`),
      { name: 'status', in: 'query', required: false, schema: { enum: kind === 'video' ? VIDEO_STATUSES : IMAGE_STATUSES } },
      { name: 'model', in: 'query', required: false, description: `A ${kind} model id.`, schema: { type: 'string' } },
    ],
    responses: {
      '200': { description: 'One page', content: json(ref(kind === 'video' ? 'VideoTaskList' : 'ImageTaskList')) },
      '400': errorAnswer(
        kind === 'video' ? 'VideoError' : 'ImageError',
        'invalid_parameter (bad limit or after) or unsupported_value (unknown status or model); param is the query field',
      ),
    },
  }),
});

export const cancelDocs = (kind: Kind): RouteDocs => ({
  operation: () => {
    const error = (description: string) => errorAnswer(kind === 'video' ? 'VideoError' : 'ImageError', description);
    return {
      operationId: kind === 'video' ? 'cancelVideo' : 'cancelImage',
      summary: `Cancel a queued or running ${kind} task`,
      description: 'No body is needed. Cancelling a cancelled task answers it again.',
      parameters: [taskIdParam],
      responses: {
        '200': {
          description: kind === 'video' ? 'The task, status `cancelled`' : 'Status envelope, `data.status` `CANCELLED`',
          content: json(ref(kind === 'video' ? 'VideoTask' : 'ImageStatus')),
        },
        '404': error('task_not_found: unknown task, or a task of another API key'),
        '409': error('task_not_cancellable: the task is completed or failed (param task_id)'),
      },
    };
  },
});
