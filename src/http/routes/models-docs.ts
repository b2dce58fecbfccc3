/** The OpenAPI side of `GET /v1/models` and `GET /v1/models/{model}` (routes/models.ts). */
import type { RouteDocs } from '../route.js';
import { errorAnswer, json, ref } from './docs-parts.js';

const MODEL = {
  type: 'object',
  required: ['id', 'object', 'kind', 'endpoint', 'display_name', 'family', 'summary', 'description', 'schema'],
  properties: {
    id: { type: 'string', examples: ['vendora/famw-2.7-t2v'] },
    object: { const: 'model' },
    kind: { enum: ['video', 'image'] },
    endpoint: { type: 'string', description: 'The create operation that takes this model.' },
    display_name: {
      type: 'string',
      description: "The model's name for people; a declared model without `display_name` gets one derived from its id.",
      examples: ['FamW 2.7 Text to Video'],
    },
    family: { type: 'string', description: "The vendor's model family (the console groups by it).", examples: ['FamW'] },
    summary: { type: 'string', description: 'One line.' },
    description: {
      type: 'string',
      description:
        'One paragraph: what the model does and the inputs it takes, its durations and resolutions; on a model no channel routes upstream, that the sandbox renders it locally.',
    },
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

const MODEL_SCHEMAS = { Model: MODEL, ModelPricing: MODEL_PRICING, ModelList: MODEL_LIST };

export const listModelsDocs: RouteDocs = {
  components: MODEL_SCHEMAS,
  operation: () => ({
    operationId: 'listModels',
    summary: 'List models with their request JSON Schemas',
    responses: { '200': { description: 'The models', content: json(ref('ModelList')) } },
  }),
};

/** The row's pattern ends in `*` (ids contain `/`): the document names that rest `{model}`. */
export const getModelDocs: RouteDocs = {
  components: MODEL_SCHEMAS,
  operation: () => ({
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
      '404': errorAnswer('VideoError', 'Unknown model'),
    },
  }),
};
