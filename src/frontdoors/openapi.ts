import type { ModelRow } from '../catalog/index.js';
import type { OpenApiOperation, OperationContext } from '../http/route.js';
import { VIDEO_OBJECT_SCHEMA } from './video-object.js';

/** The OpenAPI of the front doors: each row's operation (routes.ts) and the schemas they name. */

const ref = (name: string) => ({ $ref: `#/components/schemas/${name}` });
const json = (schema: unknown) => ({ 'application/json': { schema } });
const error = (description: string) => ({ description, content: json(ref('VideoError')) });
const TAG = ['OpenAI-compatible'];
const idempotencyKey = {
  name: 'Idempotency-Key',
  in: 'header',
  required: false,
  description: 'As on the seed create operations: the same key and body within 24 h answer the same task.',
  schema: { type: 'string', minLength: 1, maxLength: 255 },
};
const videoId = {
  name: 'video_id',
  in: 'path',
  required: true,
  description: 'The task id (the same on `/v1/video/generations/{task_id}`).',
  schema: { type: 'string' },
};

const ids = (models: readonly ModelRow[], kind: ModelRow['kind']): string[] => models.filter((row) => row.kind === kind).map((row) => row.id);

function videoFields(models: readonly ModelRow[], file: boolean): Record<string, unknown> {
  return {
    type: 'object',
    required: ['model', 'prompt'],
    additionalProperties: true,
    description: 'Any other parameter of the model by its own name (its schema: `GET /v1/models/{id}`); in a form, numbers and booleans as text.',
    properties: {
      model: { type: 'string', enum: ids(models, 'video') },
      prompt: { type: 'string' },
      seconds: { oneOf: [{ type: 'string', pattern: '^[0-9]+$' }, { type: 'integer' }], description: "The model's `duration`." },
      size: {
        type: 'string',
        pattern: '^[0-9]+x[0-9]+$',
        description:
          "`WIDTHxHEIGHT`: the model's `resolution` and `aspect_ratio` that render it (1280x720 = 720p 16:9; a square size = the nearest resolution at 1:1). A size the model cannot render is 400 on `size`.",
      },
      input_reference: file
        ? { type: 'string', format: 'binary', description: "An image file: the model's `image`. Or the field `input_reference[image_url]`." }
        : { type: 'object', required: ['image_url'], properties: { image_url: { type: 'string', description: 'An https:// URL or a Base64 data URL.' } } },
    },
  };
}

export const createVideoOperation = ({ models }: OperationContext): OpenApiOperation => ({
  operationId: 'openaiCreateVideo',
  tags: TAG,
  summary: 'Create a video (OpenAI-compatible)',
  description: "The same task as `POST /v1/video/generations`, created from OpenAI's fields. Answers OpenAI's Video object.",
  parameters: [idempotencyKey],
  requestBody: {
    required: true,
    content: { 'multipart/form-data': { schema: videoFields(models, true) }, 'application/json': { schema: videoFields(models, false) } },
  },
  responses: {
    '200': { description: 'The video, queued (or, replayed, as it is now)', content: json(ref('OpenAIVideo')) },
    '400': error('A validation code; `param` names the field as sent (`seconds`, `size`, `input_reference`, `model`, ...)'),
    '402': error('budget_exceeded'),
    '409': error('idempotency_key_in_use'),
    '413': error('The body is larger than the cap'),
    '415': error('Content-Type is neither multipart/form-data nor application/json'),
    '422': error('idempotency_key_reused'),
  },
});

export const getVideoOperation = (): OpenApiOperation => ({
  operationId: 'openaiGetVideo',
  tags: TAG,
  summary: 'Get a video (OpenAI-compatible)',
  parameters: [videoId],
  responses: { '200': { description: 'The video', content: json(ref('OpenAIVideo')) }, '404': error('task_not_found') },
});

export const listVideosOperation = (): OpenApiOperation => ({
  operationId: 'openaiListVideos',
  tags: TAG,
  summary: "List this key's videos (OpenAI-compatible)",
  parameters: [
    { name: 'limit', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 100, default: 20 } },
    { name: 'after', in: 'query', required: false, description: "The previous page's `last_id`.", schema: { type: 'string' } },
    { name: 'order', in: 'query', required: false, schema: { enum: ['asc', 'desc'], default: 'desc' } },
  ],
  responses: {
    '200': { description: 'One page', content: json(ref('OpenAIVideoList')) },
    '400': error('invalid_parameter (limit, after) or unsupported_value (order)'),
  },
});

export const videoContentOperation = (): OpenApiOperation => ({
  operationId: 'openaiGetVideoContent',
  tags: TAG,
  summary: "Download a video's MP4 (OpenAI-compatible)",
  parameters: [
    videoId,
    { name: 'variant', in: 'query', required: false, schema: { const: 'video', default: 'video' } },
    { name: 'Range', in: 'header', required: false, schema: { type: 'string' } },
  ],
  responses: {
    '200': { description: 'The MP4', content: { 'video/mp4': { schema: { type: 'string', format: 'binary' } } } },
    '206': { description: 'The byte range asked for', content: { 'video/mp4': { schema: { type: 'string', format: 'binary' } } } },
    '400': error('unsupported_value on variant: only `video`'),
    '404': error('task_not_found'),
    '409': error('video_not_ready: the video has not completed'),
  },
});

export const deleteVideoOperation = (): OpenApiOperation => ({
  operationId: 'openaiDeleteVideo',
  tags: TAG,
  summary: 'Delete a video (OpenAI-compatible)',
  description: 'Cancels the task if it is still running, then deletes it and its files: afterwards it is 404 on both dialects.',
  parameters: [videoId],
  responses: { '200': { description: 'Deleted', content: json(ref('OpenAIVideoDeleted')) }, '404': error('task_not_found') },
});

export const generateImageOperation = ({ models }: OperationContext): OpenApiOperation => ({
  operationId: 'openaiGenerateImage',
  tags: TAG,
  summary: 'Generate an image, synchronously (OpenAI-compatible)',
  description:
    'Creates the same task as `POST /v1/images/generations/async` and holds the request until it ends (MEDIAGATE_SYNC_WAIT_S at most). A client that goes away does not cancel the task.',
  parameters: [idempotencyKey],
  requestBody: {
    required: true,
    content: json({
      type: 'object',
      required: ['model', 'prompt'],
      additionalProperties: true,
      description: 'Any other parameter of the model by its own name.',
      properties: {
        model: { type: 'string', enum: ids(models, 'image') },
        prompt: { type: 'string' },
        size: { type: 'string', description: "`WIDTHxHEIGHT`, or `auto` (the model's default)." },
        n: { const: 1, default: 1 },
        response_format: { enum: ['b64_json', 'url'], default: 'b64_json' },
      },
    }),
  },
  responses: {
    '200': { description: 'The image', content: json(ref('OpenAIImagesResponse')) },
    '400': error('A validation code (param as sent), or the task failed on its input'),
    '402': error('budget_exceeded'),
    '422': error("The generation failed: `code` is the task's failure code; the message names the task"),
    '504': error('wait_timeout: the task did not end in time; the message names the task, to poll on the async path'),
  },
});

export const FRONT_DOOR_SCHEMAS = {
  OpenAIVideo: VIDEO_OBJECT_SCHEMA,
  OpenAIVideoList: {
    type: 'object',
    required: ['object', 'data', 'first_id', 'last_id', 'has_more'],
    properties: {
      object: { const: 'list' },
      data: { type: 'array', items: ref('OpenAIVideo') },
      first_id: { type: ['string', 'null'] },
      last_id: { type: ['string', 'null'] },
      has_more: { type: 'boolean' },
    },
  },
  OpenAIVideoDeleted: {
    type: 'object',
    required: ['id', 'object', 'deleted'],
    properties: { id: { type: 'string' }, object: { const: 'video.deleted' }, deleted: { const: true } },
  },
  OpenAIImagesResponse: {
    type: 'object',
    required: ['created', 'data'],
    properties: {
      created: { type: 'integer', format: 'int64' },
      data: {
        type: 'array',
        minItems: 1,
        maxItems: 1,
        items: {
          oneOf: [
            { type: 'object', required: ['b64_json'], properties: { b64_json: { type: 'string' } } },
            { type: 'object', required: ['url'], properties: { url: { type: 'string', format: 'uri' } } },
          ],
        },
      },
      usage: { description: "The task's usage: `{seconds, images, cost, currency}`." },
    },
  },
};
