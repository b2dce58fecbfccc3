import { MODELS, imageRequestSchema, videoRequestSchema, type JsonSchema, type ModelRow } from '../catalog/index.js';
import {
  IDEMPOTENCY_KEY_PARAM,
  REPLAYED_HEADER,
  TASK_OPS_SCHEMAS,
  cancelImage,
  cancelVideo,
  idempotencyResponses,
  listImages,
  listVideos,
} from './openapi-task-ops.js';

/**
 * The OpenAPI 3.1 document, derived from the catalog: each model's request body is its row's
 * JSON Schema (the one the server validates with), and the create operations take `oneOf`
 * them, discriminated by `model`.
 */

export const componentName = (row: ModelRow): string => `${row.kind === 'video' ? 'Video' : 'Image'}Request_${row.id.replace(/[^A-Za-z0-9]+/g, '_')}`;

export function requestSchema(row: ModelRow): JsonSchema {
  const { $id: _id, ...schema } = row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row);
  return schema;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

const VIDEO_ERROR = {
  type: 'object',
  required: ['error'],
  properties: {
    error: {
      type: 'object',
      required: ['type', 'code', 'message', 'param'],
      properties: {
        type: { type: 'string', examples: ['invalid_request_error'] },
        code: {
          type: 'string',
          examples: [
            'missing_parameter',
            'invalid_parameter',
            'unsupported_parameter',
            'unsupported_value',
            'task_not_found',
            'task_not_cancellable',
            'idempotency_key_reused',
            'idempotency_key_in_use',
          ],
        },
        message: { type: 'string' },
        param: { type: 'string', description: 'The top-level field at fault; empty when none.' },
      },
    },
  },
};

const IMAGE_ERROR = {
  type: 'object',
  required: ['code', 'message', 'data'],
  properties: { code: { type: 'string' }, message: { type: 'string' }, data: { type: 'null' } },
};

const VIDEO_TASK = {
  type: 'object',
  required: ['id', 'object', 'model', 'status', 'outputs', 'created_at'],
  properties: {
    id: { type: 'string' },
    object: { const: 'video.generation' },
    model: { type: 'string' },
    status: { enum: ['queued', 'processing', 'completed', 'failed', 'cancelled'] },
    outputs: {
      type: 'array',
      items: { type: 'object', required: ['type', 'url'], properties: { type: { const: 'video' }, url: { type: 'string', format: 'uri' } } },
    },
    created_at: { type: 'integer', format: 'int64', description: 'Unix time, seconds.' },
    started_at: { type: ['integer', 'null'], format: 'int64' },
    completed_at: { type: ['integer', 'null'], format: 'int64' },
    progress: { type: ['integer', 'null'], minimum: 0, maximum: 100 },
    error: {
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['type', 'code', 'message', 'param'],
          properties: { type: { type: 'string' }, code: { type: 'string' }, message: { type: 'string' }, param: { type: 'string' } },
        },
      ],
    },
  },
};

const IMAGE_CREATED = {
  type: 'object',
  required: ['code', 'message', 'data'],
  properties: {
    code: { const: 'success' },
    message: { const: '' },
    data: { type: 'object', required: ['task_id'], properties: { task_id: { type: 'string' } } },
  },
};

const IMAGE_STATUS = {
  type: 'object',
  required: ['code', 'message', 'data'],
  properties: {
    code: { const: 'success' },
    message: { const: '' },
    data: {
      type: 'object',
      required: ['task_id', 'status', 'progress', 'outputs', 'submit_time', 'start_time', 'finish_time', 'fail_reason'],
      properties: {
        task_id: { type: 'string' },
        status: { enum: ['QUEUED', 'IN_PROGRESS', 'SUCCESS', 'FAILURE', 'CANCELLED'] },
        progress: { type: 'string', pattern: '^\\d{1,3}%$', examples: ['0%', '100%'] },
        outputs: { type: 'array', items: { type: 'string', format: 'uri' } },
        submit_time: { type: 'integer', description: 'Unix time, seconds.' },
        start_time: { type: 'integer', description: '0 until started.' },
        finish_time: { type: 'integer', description: '0 until finished.' },
        fail_reason: { type: 'string', description: 'Empty unless the task failed.' },
      },
    },
  },
};

function errorResponses(schema: string) {
  const r = (description: string) => ({ description, content: json(ref(schema)) });
  return {
    '400': r('Validation error'),
    '401': r('Missing or invalid API key'),
    '413': r('Body larger than the configured cap'),
    '415': r('Content-Type is not application/json'),
    '500': r('Unexpected server fault'),
  };
}

function createBody(kind: 'video' | 'image') {
  const rows = MODELS.filter((row) => row.kind === kind);
  return {
    required: true,
    content: json({
      oneOf: rows.map((row) => ref(componentName(row))),
      discriminator: { propertyName: 'model', mapping: Object.fromEntries(rows.map((row) => [row.id, `#/components/schemas/${componentName(row)}`])) },
    }),
  };
}

const taskIdParam = [{ name: 'task_id', in: 'path', required: true, schema: { type: 'string' } }];

export function buildOpenApi(serverUrl: string): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    VideoTask: VIDEO_TASK,
    VideoError: VIDEO_ERROR,
    ImageCreated: IMAGE_CREATED,
    ImageStatus: IMAGE_STATUS,
    ImageError: IMAGE_ERROR,
    ...TASK_OPS_SCHEMAS,
  };
  for (const row of MODELS) schemas[componentName(row)] = requestSchema(row);
  return {
    openapi: '3.1.0',
    info: {
      title: 'mediagate',
      version: '1',
      description: 'Asynchronous video and image generation. Create a task, poll it until it carries output URLs, download them. Timestamps are Unix seconds.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    paths: {
      '/v1/video/generations': {
        post: {
          operationId: 'createVideo',
          summary: 'Create a video generation task',
          parameters: [IDEMPOTENCY_KEY_PARAM],
          requestBody: createBody('video'),
          responses: {
            '200': { description: 'The task, queued (or, replayed, its current state)', headers: REPLAYED_HEADER, content: json(ref('VideoTask')) },
            ...errorResponses('VideoError'),
            ...idempotencyResponses('VideoError'),
          },
        },
        get: listVideos,
      },
      '/v1/video/generations/{task_id}/cancel': { post: cancelVideo },
      '/v1/video/generations/{task_id}': {
        get: {
          operationId: 'getVideo',
          summary: 'Get a video generation task',
          parameters: taskIdParam,
          responses: {
            '200': { description: 'The task', content: json(ref('VideoTask')) },
            '404': { description: 'Unknown task, or a task of another API key', content: json(ref('VideoError')) },
            '401': { description: 'Missing or invalid API key', content: json(ref('VideoError')) },
          },
        },
      },
      '/v1/images/generations/async': {
        post: {
          operationId: 'createImage',
          summary: 'Create an image generation task',
          parameters: [IDEMPOTENCY_KEY_PARAM],
          requestBody: createBody('image'),
          responses: {
            '200': {
              description: 'Creation envelope (replayed: the status envelope of the original task)',
              headers: REPLAYED_HEADER,
              content: json({ oneOf: [ref('ImageCreated'), ref('ImageStatus')] }),
            },
            ...errorResponses('ImageError'),
            ...idempotencyResponses('ImageError'),
          },
        },
        get: listImages,
      },
      '/v1/images/generations/async/{task_id}/cancel': { post: cancelImage },
      '/v1/images/generations/async/{task_id}': {
        get: {
          operationId: 'getImage',
          summary: 'Get an image generation task',
          parameters: taskIdParam,
          responses: {
            '200': { description: 'Status envelope', content: json(ref('ImageStatus')) },
            '404': { description: 'Unknown task, or a task of another API key', content: json(ref('ImageError')) },
            '401': { description: 'Missing or invalid API key', content: json(ref('ImageError')) },
          },
        },
      },
      '/v1/models': {
        get: {
          operationId: 'listModels',
          summary: 'List models with their request JSON Schemas',
          responses: { '200': { description: 'The models' } },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API_KEY>`' } },
      schemas,
    },
  };
}
