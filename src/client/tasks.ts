import { APIPromise, responseInfo } from './api-promise.js';
import { MediagateError } from './errors.js';
import { unexpectedResponse, type HttpCore, type HttpResult } from './http.js';
import type { RecentModel, RecentTask, RecentTasks, RecentTasksParams, RequestOptions } from './types.js';
import { isRecord } from './records.js';

/** The server's range of `limit`; checked here so a bad value costs no request. */
const MAX_LIMIT = 100;

const isString = (value: unknown): value is string => typeof value === 'string';
const isNumber = (value: unknown): value is number => typeof value === 'number' && Number.isFinite(value);
const isKind = (value: unknown): boolean => value === 'video' || value === 'image';
const orNull =
  (check: (value: unknown) => boolean) =>
  (value: unknown): boolean =>
    value === null || check(value);

function isUsage(value: unknown): boolean {
  return isRecord(value) && isNumber(value['seconds']) && isNumber(value['images']) && isNumber(value['cost']) && isString(value['currency']);
}

function isRecentTask(value: unknown): value is RecentTask {
  return (
    isRecord(value) &&
    isString(value['id']) &&
    isKind(value['kind']) &&
    isString(value['model']) &&
    isString(value['model_name']) &&
    isString(value['status']) &&
    isString(value['prompt']) &&
    orNull(isNumber)(value['duration']) &&
    orNull(isString)(value['resolution']) &&
    orNull(isString)(value['size']) &&
    isNumber(value['created_at']) &&
    orNull(isNumber)(value['completed_at']) &&
    orNull(isNumber)(value['run_ms']) &&
    orNull(isUsage)(value['usage']) &&
    orNull(isString)(value['output'])
  );
}

function isExample(value: unknown): boolean {
  return isRecord(value) && isString(value['task_id']) && isKind(value['kind']) && isString(value['prompt']) && isString(value['url']);
}

function isRecentModel(value: unknown): value is RecentModel {
  return (
    isRecord(value) &&
    isString(value['model']) &&
    isNumber(value['completed']) &&
    orNull(isNumber)(value['median_run_ms']) &&
    orNull(isExample)(value['example'])
  );
}

function isRecentTasks(value: unknown): value is RecentTasks {
  return (
    isRecord(value) &&
    value['object'] === 'list' &&
    Array.isArray(value['data']) &&
    value['data'].every(isRecentTask) &&
    Array.isArray(value['models']) &&
    value['models'].every(isRecentModel)
  );
}

function limitQuery(limit: number | undefined): number | undefined {
  if (limit === undefined) return undefined;
  if (!Number.isInteger(limit) || limit < 1 || limit > MAX_LIMIT) {
    throw new MediagateError(`limit must be an integer from 1 to ${MAX_LIMIT}; got ${String(limit)}.`);
  }
  return limit;
}

/** `client.tasks`: what spans both families (`GET /v1/tasks/recent`). */
export class Tasks {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /**
   * The key's newest tasks of both families, newest first, each with its prompt (cut to 300
   * characters), model name, asked duration or size, run time, usage and first output; and per
   * model among them the median run time and the newest output as an example. `limit`: 1-100,
   * default 20. One page only: for every task, list each family (`videos.list`, `images.list`).
   *
   * ```ts
   * const { data, models } = await client.tasks.recent({ limit: 5 });
   * data[0]?.prompt; // string
   * models[0]?.median_run_ms; // number | null
   * ```
   */
  recent(params: RecentTasksParams = {}, options?: RequestOptions): APIPromise<RecentTasks> {
    // Checked before the request is made, so a bad limit throws here rather than rejecting.
    const query = { limit: limitQuery(params.limit) };
    return new APIPromise(
      this.#http.request({ method: 'GET', path: '/v1/tasks/recent', query, idempotent: true }, options).then((result: HttpResult) => {
        if (!isRecentTasks(result.body)) throw unexpectedResponse(result, 'recent tasks {object, data, models}');
        return { data: result.body, response: responseInfo(result.status, result.headers) };
      }),
    );
  }
}
