import { parseRatio, videoSize } from '../catalog/geometry.js';
import type { TaskWithParams } from '../store/operations.js';
import type { TaskStatus } from '../store/records.js';
import { seconds } from '../wire/task-bodies.js';

/** The Video object's status words: the stored status, as OpenAI's four (a cancelled task reads `failed`). */
const STATUS: Readonly<Record<TaskStatus, 'queued' | 'in_progress' | 'completed' | 'failed'>> = {
  queued: 'queued',
  processing: 'in_progress',
  completed: 'completed',
  failed: 'failed',
  cancelled: 'failed',
};

/** The output size a task renders, from its parameters (decisions §6); `size` itself for a model that takes one. */
function sizeOf(params: Readonly<Record<string, unknown>>): string {
  if (typeof params['size'] === 'string') return params['size'];
  const resolution = typeof params['resolution'] === 'string' ? params['resolution'] : undefined;
  const ratio = typeof params['aspect_ratio'] === 'string' && parseRatio(params['aspect_ratio']) !== null ? params['aspect_ratio'] : '16:9';
  const { width, height } = videoSize(resolution, ratio);
  return `${width}x${height}`;
}

/**
 * A video task as OpenAI's Video object (`GET /v1/videos/{id}` and the rest of the front door):
 * the same task the seed's paths show, in the other dialect. `expires_at`: when its output URL
 * (and file) expire, MEDIAGATE_OUTPUT_TTL_S after completion.
 */
export function videoObject(task: TaskWithParams, outputTtlMs: number) {
  const { params } = task;
  return {
    id: task.id,
    object: 'video' as const,
    model: task.model,
    status: STATUS[task.status],
    progress: task.status === 'completed' ? 100 : Math.max(0, Math.min(100, Math.round(task.progress ?? 0))),
    created_at: seconds(task.createdAt),
    completed_at: task.completedAt === null ? null : seconds(task.completedAt),
    expires_at: task.status === 'completed' && task.completedAt !== null ? seconds(task.completedAt + outputTtlMs) : null,
    prompt: typeof params['prompt'] === 'string' ? params['prompt'] : '',
    seconds: typeof params['duration'] === 'number' ? String(params['duration']) : '',
    size: sizeOf(params),
    remixed_from_video_id: null,
    error:
      task.status === 'cancelled'
        ? { code: 'cancelled', message: 'The task was cancelled.' }
        : task.error === null
          ? null
          : { code: task.error.code as string, message: task.error.message },
  };
}

export type VideoObject = ReturnType<typeof videoObject>;

const nullableSeconds = { type: ['integer', 'null'], format: 'int64', description: 'Unix time, seconds; null until set.' };

/** The OpenAPI schema `OpenAIVideo`, field for field with the presenter. */
export const VIDEO_OBJECT_SCHEMA = {
  type: 'object',
  description: "OpenAI's Video object: the same task as `VideoTask`, read through the OpenAI-compatible front door.",
  required: [
    'id',
    'object',
    'model',
    'status',
    'progress',
    'created_at',
    'completed_at',
    'expires_at',
    'prompt',
    'seconds',
    'size',
    'remixed_from_video_id',
    'error',
  ],
  properties: {
    id: { type: 'string', description: 'The task id, the same on `/v1/video/generations/{task_id}`.' },
    object: { const: 'video' },
    model: { type: 'string' },
    status: { enum: ['queued', 'in_progress', 'completed', 'failed'], description: 'A cancelled task reads `failed` with `error.code` `cancelled`.' },
    progress: { type: 'integer', minimum: 0, maximum: 100 },
    created_at: { type: 'integer', format: 'int64', description: 'Unix time, seconds.' },
    completed_at: nullableSeconds,
    expires_at: { ...nullableSeconds, description: 'When the output expires (Unix seconds); null until completed.' },
    prompt: { type: 'string' },
    seconds: { type: 'string', description: "The task's `duration`, as a string." },
    size: { type: 'string', description: 'The output size `WIDTHxHEIGHT` its resolution and aspect ratio give.' },
    remixed_from_video_id: { type: 'null' },
    error: {
      oneOf: [{ type: 'null' }, { type: 'object', required: ['code', 'message'], properties: { code: { type: 'string' }, message: { type: 'string' } } }],
    },
  } satisfies Record<keyof VideoObject, unknown>,
};
