import type { ApiError } from '../errors.js';
import type { Task } from '../store/records.js';

/**
 * The one place that shapes response bodies. Two families (seed "Errors"):
 * - video: the task object, and errors as `{error: {type, code, message, param}}`;
 * - image: `{code, message, data}`, with `data: null` on errors.
 * The family of a request is decided by its path alone, so every error on every path,
 * including unknown routes, uses its family's envelope.
 */
export type Family = 'video' | 'image';

export function familyOf(url: string): Family {
  return url.startsWith('/v1/images') ? 'image' : 'video';
}

export function errorBody(family: Family, error: ApiError): unknown {
  if (family === 'image') return { code: error.code, message: error.message, data: null };
  return { error: { type: error.type, code: error.code, message: error.message, param: error.param } };
}

/** Whole seconds: decisions §5 fixes the unit for both families. */
export const seconds = (ms: number): number => Math.floor(ms / 1000);
const secondsOrNull = (ms: number | null): number | null => (ms === null ? null : seconds(ms));

export type UrlFor = (key: string, completedAt: number) => string;

export interface VideoTaskBody {
  id: string;
  object: 'video.generation';
  model: string;
  status: string;
  outputs: { type: string; url: string }[];
  created_at: number;
  started_at: number | null;
  completed_at: number | null;
  progress: number | null;
  error: { type: string; code: string; message: string; param: string } | null;
}

export function videoTask(task: Task, urlFor: UrlFor): VideoTaskBody {
  return {
    id: task.id,
    object: 'video.generation',
    model: task.model,
    status: task.status,
    outputs: task.completedAt === null ? [] : task.outputs.map((o) => ({ type: o.type, url: urlFor(o.key, task.completedAt ?? 0) })),
    created_at: seconds(task.createdAt),
    started_at: secondsOrNull(task.startedAt),
    completed_at: secondsOrNull(task.completedAt),
    progress: task.progress,
    error: task.error,
  };
}

const IMAGE_STATUS: Readonly<Record<string, string>> = {
  queued: 'QUEUED',
  processing: 'IN_PROGRESS',
  completed: 'SUCCESS',
  failed: 'FAILURE',
  cancelled: 'CANCELLED',
};

export function imageCreated(task: Task): unknown {
  return { code: 'success', message: '', data: { task_id: task.id } };
}

export interface ImageStatusBody {
  code: 'success';
  message: '';
  data: {
    task_id: string;
    status: string;
    progress: string;
    outputs: string[];
    submit_time: number;
    start_time: number;
    finish_time: number;
    fail_reason: string;
    /**
     * Only on FAILURE: the same `{type, code, message, param}` a failed video task carries, so a
     * client (a `mediagate` channel among them) keeps the code and the parameter, not just the text.
     */
    error?: { type: string; code: string; message: string; param: string };
  };
}

export function imageTask(task: Task, urlFor: UrlFor): ImageStatusBody {
  return {
    code: 'success',
    message: '',
    data: {
      task_id: task.id,
      status: IMAGE_STATUS[task.status] ?? 'QUEUED',
      progress: `${task.progress ?? 0}%`,
      outputs: task.completedAt === null ? [] : task.outputs.map((o) => urlFor(o.key, task.completedAt ?? 0)),
      submit_time: seconds(task.createdAt),
      start_time: task.startedAt === null ? 0 : seconds(task.startedAt),
      finish_time: task.completedAt === null ? 0 : seconds(task.completedAt),
      fail_reason: task.error ? task.error.message : '',
      ...(task.status === 'failed' && task.error ? { error: { ...task.error } } : {}),
    },
  };
}
