import { AbortError, APIError, ConnectionError, RateLimitError, ServerError, StreamError, TaskFailedError, retryAfterMs } from './errors.js';
import { sleep } from './http.js';
import type { ImageTask, ImageTaskStatus, ProgressEvent, RequestOptions, TaskSnapshot, TaskStatus, VideoTask, WaitOptions } from './types.js';

const DEFAULT_POLL_MS = 1_000;
const DEFAULT_MAX_POLL_MS = 10_000;
const GROWTH = 1.5;
/**
 * Polls in a row that may fail with a transient error (connection, timeout, 429, 5xx) after their
 * own retries before a wait gives up. A wait can last minutes; a service restart should not end
 * it. With the defaults this rides out roughly 20 s of outage.
 */
const MAX_FAILED_POLLS = 5;

const transient = (error: unknown): boolean => error instanceof ConnectionError || error instanceof ServerError || error instanceof RateLimitError;

const FINAL: ReadonlySet<TaskStatus> = new Set<TaskStatus>(['completed', 'failed', 'cancelled']);

const IMAGE_STATUS: Readonly<Record<ImageTaskStatus, TaskStatus>> = {
  QUEUED: 'queued',
  IN_PROGRESS: 'processing',
  SUCCESS: 'completed',
  FAILURE: 'failed',
  CANCELLED: 'cancelled',
};

export function isImageTask(task: VideoTask | ImageTask): task is ImageTask {
  return 'task_id' in task;
}

function imageProgress(text: string): number | null {
  const match = /^(\d{1,3})%$/.exec(text);
  return match ? Number(match[1]) : null;
}

/** One task of either family in one shape (status in the video family's words, progress a number). */
export function snapshot<T extends VideoTask | ImageTask>(task: T): TaskSnapshot<T> {
  if (isImageTask(task)) {
    // A status this SDK does not know is treated as still running, so a wait goes on polling.
    const status = IMAGE_STATUS[task.status] ?? 'processing';
    return {
      kind: 'image',
      id: task.task_id,
      status,
      progress: imageProgress(task.progress),
      outputs: task.outputs,
      // A server that names the failure (data.error) gives its code and param; an older one only the text.
      error:
        status === 'failed'
          ? { code: task.error?.code ?? '', param: task.error?.param ?? '', message: task.error?.message ?? (task.fail_reason || 'The task failed.') }
          : null,
      task,
    };
  }
  return {
    kind: 'video',
    id: task.id,
    status: task.status,
    progress: task.progress,
    outputs: task.outputs.map((output) => output.url),
    error: task.error ? { code: task.error.code, param: task.error.param, message: task.error.message } : null,
    task,
  };
}

export function isFinal(status: TaskStatus): boolean {
  return FINAL.has(status);
}

/** A read of the task, with the response headers (for `Retry-After`). */
export type TaskReader<T> = (options: RequestOptions) => Promise<{ readonly task: T; readonly headers: Headers }>;

/** The final state as the wait's result: the completed task, else a TaskFailedError. */
function settle<T extends VideoTask | ImageTask>(task: T): T {
  const seen = snapshot(task);
  if (seen.status === 'completed') return task;
  throw new TaskFailedError<T>({
    taskId: seen.id,
    status: seen.status === 'cancelled' ? 'cancelled' : 'failed',
    code: seen.error?.code ?? (seen.status === 'cancelled' ? 'cancelled' : ''),
    param: seen.error?.param ?? '',
    message: seen.error?.message ?? `The task was ${seen.status}.`,
    task,
  });
}

/** Calls onProgress on the first observation and on each change of status or progress. */
function progressReporter<T extends VideoTask | ImageTask>(options: WaitOptions<T>): (task: T) => boolean {
  const started = Date.now();
  let last: string | undefined;
  return (task) => {
    const seen = snapshot(task);
    const key = `${seen.status}:${seen.progress ?? ''}`;
    if (key === last) return false;
    last = key;
    const event: ProgressEvent<T> = { ...seen, elapsedMs: Date.now() - started };
    options.onProgress?.(event);
    return true;
  };
}

/**
 * Whether the events endpoint is missing (404/405 from a server without live events, see
 * decisions §8.3, or a proxy in between) or the stream is unusable: the wait then polls. An
 * unknown task is also 404 there; the first poll reports it as the NotFoundError it is.
 */
function eventsUnavailable(error: unknown): boolean {
  if (error instanceof StreamError) return true;
  return error instanceof APIError && (error.status === 404 || error.status === 405 || error.status === 406 || error.status === 501);
}

/**
 * Waits until the task is final, over its event stream (decisions §8.3) when `stream` is given and
 * `options.events` is not false, polling when the stream is unavailable or keeps failing.
 * Resolves with the completed task; a failed or cancelled one is a TaskFailedError; an abort is an
 * AbortError carrying the task id (the task keeps running).
 */
export async function waitForTask<T extends VideoTask | ImageTask>(
  id: string,
  read: TaskReader<T>,
  options: WaitOptions<T> = {},
  stream?: () => AsyncIterable<T>,
): Promise<T> {
  const report = progressReporter(options);
  try {
    if (stream && options.events !== false) {
      try {
        for await (const task of stream()) {
          report(task);
          if (isFinal(snapshot(task).status)) return settle(task);
        }
      } catch (error) {
        if (!eventsUnavailable(error)) throw error;
      }
    }
    return await pollTask(read, options, report);
  } catch (error) {
    if (error instanceof AbortError && error.taskId === undefined) {
      throw new AbortError(`Stopped waiting for task ${id}; it keeps running on the server.`, { cause: error.cause, taskId: id });
    }
    throw error;
  }
}

/** Polls until the task is final, backing off while nothing changes. */
async function pollTask<T extends VideoTask | ImageTask>(read: TaskReader<T>, options: WaitOptions<T>, report: (task: T) => boolean): Promise<T> {
  const first = options.pollInterval ?? DEFAULT_POLL_MS;
  const longest = Math.max(first, options.maxPollInterval ?? DEFAULT_MAX_POLL_MS);
  let interval = first;
  let failed = 0;
  for (;;) {
    let polled: { readonly task: T; readonly headers: Headers };
    try {
      polled = await read({ ...options.request, ...(options.signal ? { signal: options.signal } : {}) });
      failed = 0;
    } catch (error) {
      if (!transient(error) || ++failed >= MAX_FAILED_POLLS) throw error;
      interval = Math.min(interval * GROWTH, longest);
      const hinted = error instanceof RateLimitError && error.retryAfter !== undefined ? error.retryAfter * 1000 : 0;
      await sleep(Math.max(interval, hinted), options.signal);
      continue;
    }
    const { task, headers } = polled;
    interval = report(task) ? first : Math.min(interval * GROWTH, longest);
    if (isFinal(snapshot(task).status)) return settle(task);
    await sleep(Math.max(interval, retryAfterMs(headers) ?? 0), options.signal);
  }
}
