/** The OpenAPI side of `GET /v1/tasks/recent` (routes/recent-tasks.ts). */
import { TASK_USAGE_SCHEMA, VIDEO_STATUSES } from '../../wire/task-bodies.js';
import type { RouteDocs } from '../route.js';
import { errorAnswer, json, limitParam, ref } from './docs-parts.js';

const RECENT_TASK = {
  type: 'object',
  required: [
    'id',
    'kind',
    'model',
    'model_name',
    'status',
    'prompt',
    'duration',
    'resolution',
    'size',
    'created_at',
    'completed_at',
    'run_ms',
    'usage',
    'output',
  ],
  properties: {
    id: { type: 'string' },
    kind: { enum: ['video', 'image'] },
    model: { type: 'string' },
    model_name: { type: 'string', description: "The model's display name (its id when the model is no longer in the catalog)." },
    status: { enum: VIDEO_STATUSES, description: 'In the video family’s words, for both families.' },
    prompt: { type: 'string', description: 'The prompt as sent, cut to 300 characters (ending with …).' },
    duration: { type: ['integer', 'null'], description: 'Seconds asked for (video); null for an image.' },
    resolution: { type: ['string', 'null'], description: 'Resolution asked for (video), when the request or its model default gave one.' },
    size: { type: ['string', 'null'], description: '`WIDTHxHEIGHT` asked for (image); null for a video.' },
    created_at: { type: 'integer', description: 'Unix time, seconds.' },
    completed_at: { type: ['integer', 'null'] },
    run_ms: { type: ['integer', 'null'], description: 'Milliseconds from creation to completion (queue included); null unless completed.' },
    usage: { oneOf: [{ type: 'null' }, TASK_USAGE_SCHEMA], description: 'Null until the task is final.' },
    output: { type: ['string', 'null'], format: 'uri', description: "The first output's signed URL; null unless completed." },
  },
};

const RECENT_MODEL = {
  type: 'object',
  required: ['model', 'completed', 'median_run_ms', 'example'],
  properties: {
    model: { type: 'string' },
    completed: { type: 'integer', description: 'Completed tasks of this model among the recent ones.' },
    median_run_ms: { type: ['integer', 'null'], description: 'Their median run_ms; null when none completed.' },
    example: {
      description: 'The newest completed task of this model with an output, or null.',
      oneOf: [
        { type: 'null' },
        {
          type: 'object',
          required: ['task_id', 'kind', 'prompt', 'url'],
          properties: { task_id: { type: 'string' }, kind: { enum: ['video', 'image'] }, prompt: { type: 'string' }, url: { type: 'string', format: 'uri' } },
        },
      ],
    },
  },
};

const RECENT_TASKS = {
  type: 'object',
  required: ['object', 'data', 'models'],
  properties: {
    object: { const: 'list' },
    data: { type: 'array', items: ref('RecentTask'), description: 'Newest first, both families.' },
    models: { type: 'array', items: ref('RecentModel'), description: 'One entry per model among `data`.' },
  },
};

export const recentTasksDocs: RouteDocs = {
  components: { RecentTask: RECENT_TASK, RecentModel: RECENT_MODEL, RecentTasks: RECENT_TASKS },
  operation: () => ({
    operationId: 'listRecentTasks',
    summary: "This key's newest tasks of both families, with prompts and run times",
    description:
      'The newest `limit` tasks of the calling key, video and image together, each with its prompt, model name, asked duration or size, run time, usage and first output; ' +
      'and per model among them the median run time of the completed ones and the newest output as an example. The web console reads it for its history and model card.',
    parameters: [limitParam],
    responses: {
      '200': { description: 'The recent tasks', content: json(ref('RecentTasks')) },
      '400': errorAnswer('VideoError', 'invalid_parameter: a bad limit'),
    },
  }),
};
