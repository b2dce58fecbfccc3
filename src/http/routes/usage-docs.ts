/** The OpenAPI side of `GET /v1/usage` (routes/usage.ts): the calling key's usage and budget. */
import type { RouteDocs } from '../route.js';
import { errorAnswer, json, ref } from './docs-parts.js';

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

export const usageDocs: RouteDocs = {
  components: { Usage: USAGE_REPORT },
  operation: () => ({
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
      '400': errorAnswer('VideoError', 'A bad query (invalid_parameter, param start, end or group_by)'),
    },
  }),
};
