import type { Task, TaskStatus } from '../store/records.js';
import { formatAmount } from '../billing/money.js';
import { objectSchema, serializerSchema, type WireSchema } from './schema.js';

/*
 * The task bodies, as every channel sends them: a status poll (the router and its fast path),
 * a create, a cancel, a list's items, an event stream's `data`, a webhook's `data`. Each shape
 * is written here twice, side by side: the presenter (a task record to the body) and the JSON
 * Schema of its fields. The compiler holds the two to the same keys (`satisfies`), and
 * test/wire.test.ts to the same order (a serializer writes in schema order, JSON.stringify in
 * the object's). The OpenAPI document, the routes' serializers and the SDK's response types
 * (src/client/wire.generated.ts) all derive from the schema. Adding a field is a line in the
 * presenter and a line in its schema (docs/architecture.md, "Wire shapes").
 */

/** A signed, expiring URL of an output file (storage/output-urls.ts makes them). */
export type UrlFor = (key: string, completedAt: number) => string;

/** Whole seconds: both families show time in seconds since the epoch. */
export const seconds = (ms: number): number => Math.floor(ms / 1000);
const secondsOrNull = (ms: number | null): number | null => (ms === null ? null : seconds(ms));

/** The video family's status words: the stored statuses themselves. */
export const VIDEO_STATUSES: readonly TaskStatus[] = ['queued', 'processing', 'completed', 'failed', 'cancelled'];

/** The image family's status word of each stored status. */
export const IMAGE_STATUS_WORDS = {
  queued: 'QUEUED',
  processing: 'IN_PROGRESS',
  completed: 'SUCCESS',
  failed: 'FAILURE',
  cancelled: 'CANCELLED',
} as const satisfies Record<TaskStatus, string>;

export type ImageStatusWord = (typeof IMAGE_STATUS_WORDS)[TaskStatus];

export const IMAGE_STATUSES: readonly ImageStatusWord[] = VIDEO_STATUSES.map((status) => IMAGE_STATUS_WORDS[status]);

// --- usage ----------------------------------------------------------------------------------

/**
 * A final task's usage (null until final): billed seconds (the delivered duration read from the
 * file, to the nearest second), images, cost as a number of `currency` (the pricing file's,
 * "USD" without one; at most 6 decimals), 0 for failed and cancelled tasks.
 */
export function usageBody(task: Task, currency: string) {
  const usage = task.usage;
  return usage === null ? null : { seconds: usage.seconds, images: usage.images, cost: formatAmount(usage.cost), currency };
}

export type UsageBody = NonNullable<ReturnType<typeof usageBody>>;

export const TASK_USAGE_SCHEMA = objectSchema({
  seconds: { type: 'integer', minimum: 0, description: 'Billed seconds of video: the delivered duration to the nearest second (at least 1).' },
  images: { type: 'integer', minimum: 0, description: 'Images delivered.' },
  cost: { type: 'number', minimum: 0, description: 'In `currency`, at most 6 decimals; 0 for failed and cancelled tasks.' },
  currency: { type: 'string', examples: ['USD'] },
} satisfies Record<keyof UsageBody, WireSchema>);

const USAGE_FIELD = { oneOf: [{ type: 'null' }, TASK_USAGE_SCHEMA], description: 'Null until the task is final.' };

// --- the video task ---------------------------------------------------------------------------

/** `GET /v1/video/generations/{id}` and every other video answer that carries a task. */
export function videoTask(task: Task, urlFor: UrlFor, currency: string) {
  return {
    id: task.id,
    object: 'video.generation' as const,
    model: task.model,
    status: task.status,
    outputs: task.completedAt === null ? [] : task.outputs.map((o) => ({ type: o.type, url: urlFor(o.key, task.completedAt ?? 0) })),
    created_at: seconds(task.createdAt),
    started_at: secondsOrNull(task.startedAt),
    completed_at: secondsOrNull(task.completedAt),
    progress: task.progress,
    error: task.error,
    usage: usageBody(task, currency),
  };
}

export type VideoTaskBody = ReturnType<typeof videoTask>;

/** The error object of a failed video task. */
export const TASK_ERROR_SCHEMA = objectSchema({
  type: { type: 'string' },
  code: { type: 'string' },
  message: { type: 'string' },
  param: { type: 'string' },
});

/** The fields of a video task; `statuses`: those the deployment's routes can produce. */
function videoTaskFields(statuses: readonly string[]) {
  return {
    id: { type: 'string' },
    object: { const: 'video.generation' },
    model: { type: 'string' },
    status: { enum: statuses },
    outputs: {
      type: 'array',
      description: 'Empty until the task completes; then one `{type: "video", url}` (signed, no key needed).',
      items: objectSchema({ type: { const: 'video' }, url: { type: 'string', format: 'uri' } }),
    },
    created_at: { type: 'integer', format: 'int64', description: 'Unix time, seconds.' },
    started_at: { type: ['integer', 'null'], format: 'int64' },
    completed_at: { type: ['integer', 'null'], format: 'int64' },
    progress: { type: ['integer', 'null'], minimum: 0, maximum: 100, description: '0-100; null right after creation.' },
    error: { oneOf: [{ type: 'null' }, TASK_ERROR_SCHEMA] },
    usage: USAGE_FIELD,
  } satisfies Record<keyof VideoTaskBody, WireSchema>;
}

/** The OpenAPI schema `VideoTask`. */
export const videoTaskSchema = (statuses: readonly string[] = VIDEO_STATUSES): WireSchema => objectSchema(videoTaskFields(statuses));

// --- the image envelopes ----------------------------------------------------------------------

/** The `data` of `GET /v1/images/generations/async/{id}`: an image list's item too. */
export function imageTaskData(task: Task, urlFor: UrlFor, currency: string) {
  return {
    task_id: task.id,
    status: IMAGE_STATUS_WORDS[task.status],
    progress: `${task.progress ?? 0}%`,
    outputs: task.completedAt === null ? [] : task.outputs.map((o) => urlFor(o.key, task.completedAt ?? 0)),
    submit_time: seconds(task.createdAt),
    start_time: task.startedAt === null ? 0 : seconds(task.startedAt),
    finish_time: task.completedAt === null ? 0 : seconds(task.completedAt),
    fail_reason: task.error ? task.error.message : '',
    usage: usageBody(task, currency),
    /**
     * Only on FAILURE: the same `{type, code, message, param}` a failed video task carries, so a
     * client (a `mediagate` channel among them) keeps the code and the parameter, not just the text.
     */
    ...(task.status === 'failed' && task.error ? { error: { ...task.error } } : {}),
  };
}

export type ImageTaskData = ReturnType<typeof imageTaskData>;

function imageTaskFields(statuses: readonly string[]) {
  return {
    task_id: { type: 'string' },
    status: { enum: statuses },
    progress: { type: 'string', pattern: '^\\d{1,3}%$', examples: ['0%', '100%'], description: '`"0%"` to `"100%"`.' },
    outputs: {
      type: 'array',
      description: 'URLs of the generated images (signed, no key needed); empty until SUCCESS.',
      items: { type: 'string', format: 'uri' },
    },
    submit_time: { type: 'integer', description: 'Unix time, seconds.' },
    start_time: { type: 'integer', description: '0 until started.' },
    finish_time: { type: 'integer', description: '0 until finished.' },
    fail_reason: { type: 'string', description: 'Empty unless the task failed.' },
    usage: USAGE_FIELD,
    error: { ...TASK_ERROR_SCHEMA, description: 'Only when the task failed (FAILURE): the same error object a failed video task carries.' },
  } satisfies Record<keyof ImageTaskData, WireSchema>;
}

/** The image family's success envelope around `data`. */
function imageEnvelope<T>(data: T) {
  return { code: 'success' as const, message: '' as const, data };
}

function imageEnvelopeSchema(data: WireSchema): WireSchema {
  return objectSchema({ code: { const: 'success' }, message: { const: '' }, data });
}

/** `GET /v1/images/generations/async/{id}`, and the other image answers that carry a task. */
export function imageTask(task: Task, urlFor: UrlFor, currency: string) {
  return imageEnvelope(imageTaskData(task, urlFor, currency));
}

export type ImageStatusBody = ReturnType<typeof imageTask>;

/** The OpenAPI schema `ImageStatus`. */
export const imageStatusSchema = (statuses: readonly string[] = IMAGE_STATUSES): WireSchema => {
  const fields = imageTaskFields(statuses);
  // `error` is present only on FAILURE: every other field is required.
  return imageEnvelopeSchema(objectSchema(fields, { required: Object.keys(fields).filter((name) => name !== 'error') }));
};

/** `POST /v1/images/generations/async`: the new task's id. */
export function imageCreated(task: Task) {
  return imageEnvelope(imageCreatedData(task));
}

function imageCreatedData(task: Task) {
  return { task_id: task.id };
}

export const IMAGE_CREATED_SCHEMA: WireSchema = imageEnvelopeSchema(
  objectSchema({ task_id: { type: 'string' } } satisfies Record<keyof ReturnType<typeof imageCreatedData>, WireSchema>),
);

// --- either family ----------------------------------------------------------------------------

/** A task as a status poll of its family answers it (the video object; the image envelope). */
export function taskBody(task: Task, urlFor: UrlFor, currency: string): VideoTaskBody | ImageStatusBody {
  return task.kind === 'video' ? videoTask(task, urlFor, currency) : imageTask(task, urlFor, currency);
}

/** The status routes' serializer schemas (http/routes.ts): the same fields, as the bytes need them. */
export const VIDEO_TASK_RESPONSE = serializerSchema(videoTaskSchema());
export const IMAGE_STATUS_RESPONSE = serializerSchema(imageStatusSchema());
