import { imageRequestSchema, videoRequestSchema, type JsonSchema, type ModelRow } from '../catalog/index.js';
import { EXAMPLE_PROMPT } from './docs-page-example.js';
import type { Route } from './route.js';
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
import { ADMIN_PATHS, ADMIN_SCHEMAS } from './openapi-admin.js';
import { WEBHOOK_PATHS, WEBHOOK_SCHEMAS, webhookEvents } from './openapi-webhooks.js';
import { IMAGE_ERROR_SCHEMA, VIDEO_ERROR_SCHEMA } from '../wire/envelopes.js';
import { IMAGE_CREATED_SCHEMA, IMAGE_STATUSES, VIDEO_STATUSES, imageStatusSchema, videoTaskSchema } from '../wire/task-bodies.js';

/**
 * The OpenAPI 3.1 document, derived from the catalog: each model's request body is its row's
 * JSON Schema (the one the server validates with), and the create operations take `oneOf`
 * them, discriminated by `model`. The response bodies' schemas are the wire shapes' own
 * (src/wire/).
 */

export const componentName = (row: ModelRow): string => `${row.kind === 'video' ? 'Video' : 'Image'}Request_${row.id.replace(/[^A-Za-z0-9]+/g, '_')}`;

export function requestSchema(row: ModelRow): JsonSchema {
  const { $id: _id, ...schema } = row.kind === 'video' ? videoRequestSchema(row) : imageRequestSchema(row);
  return schema;
}

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });

/**
 * Statuses an operation can produce: `cancelled` only once a cancel route is in the table (a
 * client must not be told to handle a state nothing reaches).
 */
function statuses(routes: readonly Route[]): { video: string[]; image: string[] } {
  const cancel = routes.some((route) => route.path.endsWith('/cancel'));
  return {
    video: VIDEO_STATUSES.filter((status) => cancel || status !== 'cancelled'),
    image: IMAGE_STATUSES.filter((status) => cancel || status !== 'CANCELLED'),
  };
}

const MODEL = {
  type: 'object',
  required: ['id', 'object', 'kind', 'endpoint', 'description', 'schema'],
  properties: {
    id: { type: 'string', examples: ['vendora/famw-2.7-t2v'] },
    object: { const: 'model' },
    kind: { enum: ['video', 'image'] },
    endpoint: { type: 'string', description: 'The create operation that takes this model.' },
    description: { type: 'string' },
    schema: { type: 'object', description: 'The JSON Schema the request body of this model is validated with.' },
    pricing: ref('ModelPricing'),
    lifecycle: {
      type: 'object',
      description: "A declared model's deprecation and retirement (RFC 3339 dates); only on a model that has them.",
      required: ['deprecated'],
      properties: {
        deprecated: { type: 'boolean' },
        deprecated_at: { type: 'string', description: 'RFC 3339' },
        retires_at: { type: 'string', description: 'RFC 3339' },
        successor: { type: 'string' },
        retired: { const: true },
      },
    },
  },
};

/** A model's price (present only when the deployment has a pricing file). Amounts have at most 6 decimals. */
const MODEL_PRICING = {
  type: 'object',
  description:
    'What a task of this model costs, present when the deployment has a pricing file: per_task + per_second x billed seconds + per_image x images. ' +
    'A model with no price shows only `currency` (it costs 0).',
  required: ['currency'],
  additionalProperties: false,
  properties: {
    currency: { type: 'string', pattern: '^[A-Z]{3}$', examples: ['USD'] },
    per_task: { type: 'number', minimum: 0 },
    per_second: {
      description: 'One amount, or amounts by the task\'s `resolution` (`"*"`: any other value).',
      oneOf: [
        { type: 'number', minimum: 0 },
        { type: 'object', additionalProperties: { type: 'number', minimum: 0 } },
      ],
    },
    per_image: { type: 'number', minimum: 0 },
  },
};

const MODEL_LIST = {
  type: 'object',
  required: ['object', 'data'],
  properties: { object: { const: 'list' }, data: { type: 'array', items: ref('Model') } },
};

/** Over a per-key limit (http/rate-limit.ts): when to try again, and the limit itself. */
const RATE_LIMIT_HEADERS = {
  'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer', minimum: 0 } },
  'RateLimit-Policy': { description: 'The limit of this key (IETF draft RateLimit header fields).', schema: { type: 'string' } },
  RateLimit: { description: 'What is left of the limit, and when it resets.', schema: { type: 'string' } },
};

/** Responses every keyed operation can give, in the family's error envelope. */
function keyedResponses(schema: string) {
  const r = (description: string) => ({ description, content: json(ref(schema)) });
  return {
    '401': r('Missing or invalid API key'),
    '429': { description: 'Over the per-key request rate or tasks in flight', headers: RATE_LIMIT_HEADERS, content: json(ref(schema)) },
    '500': r('Unexpected server fault'),
  };
}

/** An operation of another module with the responses every keyed operation can give. */
function withKeyed<T extends { responses: object }>(operation: T, schema: string): T {
  return { ...operation, responses: { ...operation.responses, ...keyedResponses(schema) } };
}

function errorResponses(schema: string) {
  const r = (description: string) => ({ description, content: json(ref(schema)) });
  return {
    '400': r('Validation error'),
    '413': r('Body larger than the configured cap'),
    '415': r('Content-Type is not application/json'),
    '402': r("The task's maximum cost does not fit what is left of the API key's budget (budget_exceeded)"),
    ...keyedResponses(schema),
  };
}

const USAGE_FIGURES = {
  tasks: { type: 'integer' },
  seconds: { type: 'integer' },
  images: { type: 'integer' },
  cost: { type: 'number' },
};

/** GET /v1/usage: the calling key's final tasks over whole UTC days, with its budget. */
const USAGE_REPORT = {
  type: 'object',
  required: ['object', 'currency', 'start', 'end', 'totals', 'data', 'budget'],
  properties: {
    object: { const: 'usage' },
    currency: { type: 'string' },
    start: { type: 'integer', description: 'Unix seconds: the start of the first UTC day covered.' },
    end: { type: 'integer', description: 'Unix seconds: the end of the last UTC day covered.' },
    totals: { type: 'object', properties: USAGE_FIGURES },
    data: {
      type: 'array',
      items: {
        type: 'object',
        properties: { model: { type: ['string', 'null'] }, day: { type: ['string', 'null'], examples: ['2026-11-25'] }, ...USAGE_FIGURES },
      },
    },
    budget: {
      type: 'object',
      properties: {
        budget: { type: ['number', 'null'] },
        budget_period: { enum: ['day', 'month', null] },
        spent: { type: 'number' },
        reserved: { type: 'number' },
        resets_at: { type: ['integer', 'null'] },
      },
    },
  },
};

/** Whether a model takes any image, video or audio input (an image-to-video model does). */
function takesMedia(row: ModelRow): boolean {
  const properties = Object.values((requestSchema(row)['properties'] ?? {}) as Record<string, Record<string, unknown>>);
  return properties.some((p) => p['format'] === 'media-input' || (p['items'] as Record<string, unknown> | undefined)?.['format'] === 'media-input');
}

/**
 * A request that works as it stands (/docs prefills its "try it" form with it): the first
 * text-only model of the kind (else the first needing nothing but a prompt), or none when every
 * model needs more.
 */
function createExample(rows: readonly ModelRow[]): { example: Record<string, unknown> } | undefined {
  const promptOnly = rows.filter(
    (row) => !(row.kind === 'video' && row.atLeastOneOf) && (requestSchema(row)['required'] as string[]).every((name) => name === 'model' || name === 'prompt'),
  );
  const simple = promptOnly.find((row) => !takesMedia(row)) ?? promptOnly[0];
  return simple ? { example: { model: simple.id, prompt: EXAMPLE_PROMPT } } : undefined;
}

function createBody(kind: 'video' | 'image', models: readonly ModelRow[]) {
  const rows = models.filter((row) => row.kind === kind);
  // No routed model of this kind: every create is refused (unsupported_value on model).
  if (rows.length === 0) return { required: true, content: json({ type: 'object', description: 'No model of this kind is offered by this deployment.' }) };
  const schema = {
    oneOf: rows.map((row) => ref(componentName(row))),
    discriminator: { propertyName: 'model', mapping: Object.fromEntries(rows.map((row) => [row.id, `#/components/schemas/${componentName(row)}`])) },
  };
  return { required: true, content: { 'application/json': { schema, ...createExample(rows) } } };
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
        '200': {
          description: 'The event stream',
          content: { 'text/event-stream': { schema: { type: 'string', description: `Events whose data is a ${poll}` } } },
        },
        '404': { description: 'Unknown task, or a task of another API key', content: json(ref(error)) },
        ...keyedResponses(error),
      },
    },
  };
}

/** The webhook operations, each with the responses every keyed operation can give. */
function webhookPaths(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(WEBHOOK_PATHS).map(([path, item]) => [
      path,
      Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, withKeyed(operation, 'VideoError')])),
    ]),
  );
}

/** The admin operations (admin keys only), each with the responses every keyed operation can give. */
function adminPaths(): Record<string, unknown> {
  return Object.fromEntries(
    Object.entries(ADMIN_PATHS).map(([path, item]) => [
      path,
      Object.fromEntries(Object.entries(item).map(([method, operation]) => [method, withKeyed(operation, 'VideoError')])),
    ]),
  );
}

/** `/v1/videos/:id/content` -> `/v1/videos/{id}/content`. */
const openApiPath = (pattern: string): string => pattern.replace(/:([A-Za-z_]+)/g, '{$1}');

/**
 * The operations the rows declare themselves (Route.operation), each with the responses every
 * keyed operation can give in its family's envelope, and the component schemas they name.
 */
function rowPaths(routes: readonly Route[], models: readonly ModelRow[], schemas: Record<string, unknown>): Record<string, Record<string, unknown>> {
  const paths: Record<string, Record<string, unknown>> = {};
  for (const route of routes) {
    if (!route.operation) continue;
    const operation = route.operation({ models });
    const error = route.family === 'image' ? 'ImageError' : 'VideoError';
    const item = (paths[openApiPath(route.path)] ??= {});
    for (const method of route.methods) item[method.toLowerCase()] = route.auth ? withKeyed(operation, error) : operation;
    Object.assign(schemas, route.components ?? {});
  }
  return paths;
}

export function buildOpenApi(serverUrl: string, routes: readonly Route[], models: readonly ModelRow[]): Record<string, unknown> {
  const status = statuses(routes);
  const schemas: Record<string, unknown> = {
    VideoTask: videoTaskSchema(status.video),
    VideoError: VIDEO_ERROR_SCHEMA,
    ImageCreated: IMAGE_CREATED_SCHEMA,
    ImageStatus: imageStatusSchema(status.image),
    ImageError: IMAGE_ERROR_SCHEMA,
    Model: MODEL,
    ModelPricing: MODEL_PRICING,
    ModelList: MODEL_LIST,
    Usage: USAGE_REPORT,
    ...TASK_OPS_SCHEMAS,
  };
  const webhooks = routes.some((route) => route.path === '/v1/webhooks');
  if (webhooks) Object.assign(schemas, WEBHOOK_SCHEMAS);
  const admin = routes.some((route) => route.path.startsWith('/v1/admin/'));
  if (admin) Object.assign(schemas, ADMIN_SCHEMAS);
  for (const row of models) schemas[componentName(row)] = requestSchema(row);
  const declared = rowPaths(routes, models, schemas);
  const document = {
    openapi: '3.1.0',
    info: {
      title: 'mediagate',
      version: '1',
      license: { name: 'MIT', identifier: 'MIT' },
      description: 'Asynchronous video and image generation. Create a task, poll it until it carries output URLs, download them. Timestamps are Unix seconds.',
    },
    servers: [{ url: serverUrl }],
    security: [{ bearer: [] }],
    ...(webhooks ? { webhooks: webhookEvents() } : {}),
    paths: {
      ...(webhooks ? webhookPaths() : {}),
      ...(admin ? adminPaths() : {}),
      '/v1/video/generations': {
        post: {
          operationId: 'createVideo',
          summary: 'Create a video generation task',
          parameters: [IDEMPOTENCY_KEY_PARAM],
          requestBody: createBody('video', models),
          responses: {
            '200': { description: 'The task, queued (or, replayed, its current state)', headers: REPLAYED_HEADER, content: json(ref('VideoTask')) },
            ...errorResponses('VideoError'),
            ...idempotencyResponses('VideoError'),
          },
        },
        get: withKeyed(listVideos, 'VideoError'),
      },
      '/v1/video/generations/{task_id}/cancel': { post: withKeyed(cancelVideo, 'VideoError') },
      '/v1/video/generations/{task_id}': {
        get: {
          operationId: 'getVideo',
          summary: 'Get a video generation task',
          parameters: taskIdParam,
          responses: {
            '200': { description: 'The task', content: json(ref('VideoTask')) },
            '404': { description: 'Unknown task, or a task of another API key', content: json(ref('VideoError')) },
            ...keyedResponses('VideoError'),
          },
        },
      },
      '/v1/video/generations/{task_id}/events': eventsPath('video'),
      '/v1/images/generations/async': {
        post: {
          operationId: 'createImage',
          summary: 'Create an image generation task',
          parameters: [IDEMPOTENCY_KEY_PARAM],
          requestBody: createBody('image', models),
          responses: {
            '200': {
              description: 'Creation envelope (replayed: the status envelope of the original task)',
              headers: REPLAYED_HEADER,
              content: json({ anyOf: [ref('ImageCreated'), ref('ImageStatus')] }),
            },
            ...errorResponses('ImageError'),
            ...idempotencyResponses('ImageError'),
          },
        },
        get: withKeyed(listImages, 'ImageError'),
      },
      '/v1/images/generations/async/{task_id}/cancel': { post: withKeyed(cancelImage, 'ImageError') },
      '/v1/images/generations/async/{task_id}': {
        get: {
          operationId: 'getImage',
          summary: 'Get an image generation task',
          parameters: taskIdParam,
          responses: {
            '200': { description: 'Status envelope', content: json(ref('ImageStatus')) },
            '404': { description: 'Unknown task, or a task of another API key', content: json(ref('ImageError')) },
            ...keyedResponses('ImageError'),
          },
        },
      },
      '/v1/images/generations/async/{task_id}/events': eventsPath('image'),
      '/v1/usage': {
        get: {
          operationId: 'getUsage',
          summary: "The API key's usage and budget",
          description: 'Final tasks by model and UTC day (from the daily rollup), totals, and the budget. `start`/`end` are widened to whole UTC days.',
          parameters: [
            {
              name: 'start',
              in: 'query',
              required: false,
              schema: { type: 'integer' },
              description: 'Unix seconds; default: the budget period, else 30 days ago.',
            },
            {
              name: 'end',
              in: 'query',
              required: false,
              schema: { type: 'integer' },
              description: 'Unix seconds; default: the end of the budget period, else today.',
            },
            { name: 'group_by', in: 'query', required: false, schema: { enum: ['model', 'day', 'model,day', 'day,model'] } },
          ],
          responses: {
            '200': { description: 'The report', content: json(ref('Usage')) },
            '400': { description: 'A bad query (invalid_parameter, param start, end or group_by)', content: json(ref('VideoError')) },
            ...keyedResponses('VideoError'),
          },
        },
      },
      '/v1/models': {
        get: {
          operationId: 'listModels',
          summary: 'List models with their request JSON Schemas',
          responses: { '200': { description: 'The models', content: json(ref('ModelList')) }, ...keyedResponses('VideoError') },
        },
      },
      '/v1/models/{model}': {
        get: {
          operationId: 'getModel',
          summary: 'Get one model with its request JSON Schema',
          parameters: [
            {
              name: 'model',
              in: 'path',
              required: true,
              description: 'The model id. Ids contain `/`; it may be sent as is (`/v1/models/vendora/famw-2.7-t2v`) or percent-encoded.',
              schema: { type: 'string' },
            },
          ],
          responses: {
            '200': { description: 'The model', content: json(ref('Model')) },
            '404': { description: 'Unknown model', content: json(ref('VideoError')) },
            ...keyedResponses('VideoError'),
          },
        },
      },
    },
    components: {
      securitySchemes: { bearer: { type: 'http', scheme: 'bearer', description: '`Authorization: Bearer <API_KEY>`' } },
      schemas,
    },
  };
  // Rows that declare their operation come after the hand-written paths, method by method.
  const paths: Record<string, object> = document.paths;
  for (const [path, item] of Object.entries(declared)) paths[path] = { ...paths[path], ...item };
  return document;
}
