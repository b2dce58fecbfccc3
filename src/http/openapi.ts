import { imageRequestSchema, videoRequestSchema, type JsonSchema, type ModelRow } from '../catalog/index.js';

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
        code: { type: 'string', examples: ['missing_parameter', 'invalid_parameter', 'unsupported_parameter', 'unsupported_value', 'task_not_found'] },
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

function createBody(kind: 'video' | 'image', models: readonly ModelRow[]) {
  const rows = models.filter((row) => row.kind === kind);
  // No routed model of this kind: every create is refused (unsupported_value on model).
  if (rows.length === 0) return { required: true, content: json({ type: 'object', description: 'No model of this kind is offered by this deployment.' }) };
  return {
    required: true,
    content: json({
      oneOf: rows.map((row) => ref(componentName(row))),
      discriminator: { propertyName: 'model', mapping: Object.fromEntries(rows.map((row) => [row.id, `#/components/schemas/${componentName(row)}`])) },
    }),
  };
}

const taskIdParam = [{ name: 'task_id', in: 'path', required: true, schema: { type: 'string' } }];

/** `GET .../{task_id}/events` (decisions 8.3); the web console feature-detects it here. */
function eventsPath(family: 'video' | 'image'): Record<string, unknown> {
  const error = family === 'video' ? 'VideoError' : 'ImageError';
  const poll = family === 'video' ? 'VideoTask' : 'ImageStatus';
  return {
    get: {
      operationId: family === 'video' ? 'streamVideoEvents' : 'streamImageEvents',
      summary: `Follow a ${family} generation task live (server-sent events)`,
      description:
        `One event \`task\` per change of status or progress; its \`data\` is the task exactly as a status poll returns it (${poll}), ` +
        "its `id` orders the events (the task's version). The first event is the current state; the stream ends after a final state. " +
        'A comment line is sent at least every 15 s. Send `Last-Event-ID` to resume after an event.',
      parameters: [...taskIdParam, { name: 'Last-Event-ID', in: 'header', required: false, schema: { type: 'string' } }],
      responses: {
        '200': { description: 'The event stream', content: { 'text/event-stream': { schema: { type: 'string' }, itemSchema: ref(poll) } } },
        '404': { description: 'Unknown task, or a task of another API key', content: json(ref(error)) },
        '401': { description: 'Missing or invalid API key', content: json(ref(error)) },
      },
    },
  };
}

export function buildOpenApi(serverUrl: string, models: readonly ModelRow[]): Record<string, unknown> {
  const schemas: Record<string, unknown> = {
    VideoTask: VIDEO_TASK,
    VideoError: VIDEO_ERROR,
    ImageCreated: IMAGE_CREATED,
    ImageStatus: IMAGE_STATUS,
    ImageError: IMAGE_ERROR,
  };
  for (const row of models) schemas[componentName(row)] = requestSchema(row);
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
          requestBody: createBody('video', models),
          responses: { '200': { description: 'The task, queued', content: json(ref('VideoTask')) }, ...errorResponses('VideoError') },
        },
      },
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
      '/v1/video/generations/{task_id}/events': eventsPath('video'),
      '/v1/images/generations/async': {
        post: {
          operationId: 'createImage',
          summary: 'Create an image generation task',
          requestBody: createBody('image', models),
          responses: { '200': { description: 'Creation envelope', content: json(ref('ImageCreated')) }, ...errorResponses('ImageError') },
        },
      },
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
      '/v1/images/generations/async/{task_id}/events': eventsPath('image'),
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
