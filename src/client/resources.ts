import { APIPromise, responseInfo, type WithResponse } from './api-promise.js';
import { apiErrorFrom, MediagateError } from './errors.js';
import { TaskEventStream } from './events.js';
import { unexpectedResponse, type HttpCore, type HttpResult, type RequestSpec } from './http.js';
import type { ImageCreateParams, VideoCreateParams } from './models.generated.js';
import { Page } from './pagination.js';
import type {
  CreateAndWaitOptions,
  CreateOptions,
  EventsOptions,
  ImageListParams,
  ImageTask,
  ImageTaskCreated,
  ModelInfo,
  RequestOptions,
  UncheckedParams,
  VideoListParams,
  VideoTask,
  WaitOptions,
} from './types.js';
import { isFinal, snapshot, waitForTask } from './wait.js';
import { isRecord } from './records.js';
const VIDEO_PATH = '/v1/video/generations';
const IMAGE_PATH = '/v1/images/generations/async';

function isVideoTask(value: unknown): value is VideoTask {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['status'] === 'string' && Array.isArray(value['outputs']);
}

function isImageTask(value: unknown): value is ImageTask {
  return isRecord(value) && typeof value['task_id'] === 'string' && typeof value['status'] === 'string' && Array.isArray(value['outputs']);
}

function isModelInfo(value: unknown): value is ModelInfo {
  return isRecord(value) && typeof value['id'] === 'string' && typeof value['kind'] === 'string' && isRecord(value['schema']);
}

function taskPath(base: string, id: string): string {
  if (id === '') throw new MediagateError('A task id is required.');
  return `${base}/${encodeURIComponent(id)}`;
}

function videoTask(result: HttpResult): VideoTask {
  if (!isVideoTask(result.body)) throw unexpectedResponse(result, 'a video task object');
  return result.body;
}

/** The image family's envelope `{code:'success', message, data}`: returns `data`. */
function imageData(result: HttpResult): unknown {
  const body = result.body;
  if (!isRecord(body) || typeof body['code'] !== 'string') throw unexpectedResponse(result, 'the image envelope {code, message, data}');
  if (body['code'] !== 'success') throw apiErrorFrom(result.status, result.headers, body);
  return body['data'];
}

/** The API call, its parsed result and the response it came from. */
function call<T>(http: HttpCore, spec: RequestSpec, options: RequestOptions | undefined, parse: (result: HttpResult) => T): APIPromise<T> {
  return new APIPromise(
    http.request(spec, options).then((result): WithResponse<T> => ({ data: parse(result), response: responseInfo(result.status, result.headers) })),
  );
}

/** A create's request options and its idempotency key, apart. */
function createSpec(path: string, body: object, options: CreateOptions | undefined): { spec: RequestSpec; request: RequestOptions } {
  const { idempotencyKey, ...request } = options ?? {};
  return { spec: { method: 'POST', path, body, idempotent: false, ...(idempotencyKey !== undefined ? { idempotencyKey } : {}) }, request };
}

/** The request options of a wait's create: its signal and request options, and the key. */
function waitCreateOptions<T extends VideoTask | ImageTask>(options: CreateAndWaitOptions<T> | undefined): CreateOptions {
  return {
    ...options?.request,
    ...(options?.signal ? { signal: options.signal } : {}),
    ...(options?.idempotencyKey !== undefined ? { idempotencyKey: options.idempotencyKey } : {}),
  };
}

function listQuery(params: VideoListParams | ImageListParams): Record<string, string | number | undefined> {
  return { limit: params.limit, after: params.after, status: params.status, model: params.model };
}

function isVideoList(value: unknown): value is { data: VideoTask[]; has_more: boolean; last_id: string | null } {
  return (
    isRecord(value) &&
    Array.isArray(value['data']) &&
    value['data'].every(isVideoTask) &&
    typeof value['has_more'] === 'boolean' &&
    (typeof value['last_id'] === 'string' || value['last_id'] === null)
  );
}

function isImageList(value: unknown): value is { items: ImageTask[]; has_more: boolean; last_id: string | null } {
  return (
    isRecord(value) &&
    Array.isArray(value['items']) &&
    value['items'].every(isImageTask) &&
    typeof value['has_more'] === 'boolean' &&
    (typeof value['last_id'] === 'string' || value['last_id'] === null)
  );
}

/** `client.videos`: create, get, list, cancel, events and waits on `/v1/video/generations`. */
export class Videos {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /**
   * Creates a task and returns it queued. Without an `idempotencyKey` it is not retried except
   * where it cannot have run (see RequestSpec.idempotent); with one it is retried like a read.
   */
  create(params: VideoCreateParams, options?: CreateOptions): APIPromise<VideoTask> {
    return this.send(params, options);
  }

  /** `create` with parameters checked only by the server (built at run time, or a model newer than this SDK). */
  createUnchecked(params: UncheckedParams, options?: CreateOptions): APIPromise<VideoTask> {
    return this.send(params, options);
  }

  get(id: string, options?: RequestOptions): APIPromise<VideoTask> {
    return call(this.#http, { method: 'GET', path: taskPath(VIDEO_PATH, id), idempotent: true }, options, videoTask);
  }

  /**
   * Cancels a queued or processing task (it never completes afterwards); a cancelled task is
   * returned again. A completed or failed task is a ConflictError `task_not_cancellable`.
   */
  cancel(id: string, options?: RequestOptions): APIPromise<VideoTask> {
    // Cancelling twice answers the same, so a retry is harmless.
    return call(this.#http, { method: 'POST', path: `${taskPath(VIDEO_PATH, id)}/cancel`, idempotent: true }, options, videoTask);
  }

  /** One page of this key's tasks, newest first; iterate it (`for await`) for every task of every page. */
  async list(params: VideoListParams = {}, options?: RequestOptions): Promise<Page<VideoTask>> {
    const result = await this.#http.request({ method: 'GET', path: VIDEO_PATH, query: listQuery(params), idempotent: true }, options);
    if (!isVideoList(result.body)) throw unexpectedResponse(result, 'a list {object, data, has_more, last_id}');
    return new Page({ data: result.body.data, hasMore: result.body.has_more, lastId: result.body.last_id }, (after) =>
      this.list({ ...params, after }, options),
    );
  }

  /** The task's states as they change (server-sent events); ends after the final state. */
  events(id: string, options?: EventsOptions): TaskEventStream<VideoTask> {
    const path = `${taskPath(VIDEO_PATH, id)}/events`;
    return new TaskEventStream(this.#http, { path, parse: (data) => (isVideoTask(data) ? data : undefined), isFinal: (task) => isFinal(task.status) }, options);
  }

  /** Waits until the task completes (resolves) or fails (TaskFailedError): over its events, else by polling. */
  wait(id: string, options?: WaitOptions<VideoTask>): Promise<VideoTask> {
    return waitForTask(
      id,
      (request) => this.read(id, request),
      options,
      () => this.events(id, eventOptions(options)),
    );
  }

  async createAndWait(params: VideoCreateParams, options?: CreateAndWaitOptions<VideoTask>): Promise<VideoTask> {
    const task = await this.create(params, waitCreateOptions(options));
    return this.wait(task.id, options);
  }

  private send(body: object, options?: CreateOptions): APIPromise<VideoTask> {
    const { spec, request } = createSpec(VIDEO_PATH, body, options);
    return call(this.#http, spec, request, videoTask);
  }

  private async read(id: string, options?: RequestOptions): Promise<{ task: VideoTask; headers: Headers }> {
    const result = await this.#http.request({ method: 'GET', path: taskPath(VIDEO_PATH, id), idempotent: true }, options);
    return { task: videoTask(result), headers: result.headers };
  }
}

/**
 * A wait's stream: it reconnects no slower than it would poll, and gives up on the stream (and
 * polls) after three failed connections in a row.
 */
function eventOptions<T extends VideoTask | ImageTask>(options: WaitOptions<T> | undefined): EventsOptions {
  return {
    maxReconnects: 3,
    ...(options?.pollInterval !== undefined ? { reconnectDelay: options.pollInterval } : {}),
    ...(options?.signal ? { signal: options.signal } : {}),
    ...(options?.request?.headers ? { headers: options.request.headers } : {}),
  };
}

function imageTaskData(result: HttpResult): ImageTask {
  const data = imageData(result);
  if (!isImageTask(data)) throw unexpectedResponse(result, 'an image task in data');
  return data;
}

/** An image event's `data`: the status envelope; its task. */
function imageEventTask(data: unknown): ImageTask | undefined {
  return isRecord(data) && data['code'] === 'success' && isImageTask(data['data']) ? data['data'] : undefined;
}

/** `client.images`: the same on `/v1/images/generations/async`, envelopes unwrapped. */
export class Images {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /** Creates a task; returns its id. Retried as `videos.create` is (with an idempotencyKey, like a read). */
  create(params: ImageCreateParams, options?: CreateOptions): APIPromise<ImageTaskCreated> {
    return this.send(params, options);
  }

  /** `create` with parameters checked only by the server. */
  createUnchecked(params: UncheckedParams, options?: CreateOptions): APIPromise<ImageTaskCreated> {
    return this.send(params, options);
  }

  get(id: string, options?: RequestOptions): APIPromise<ImageTask> {
    return call(this.#http, { method: 'GET', path: taskPath(IMAGE_PATH, id), idempotent: true }, options, imageTaskData);
  }

  /** Cancels a queued or in-progress task (`CANCELLED`); a SUCCESS or FAILURE task is a ConflictError `task_not_cancellable`. */
  cancel(id: string, options?: RequestOptions): APIPromise<ImageTask> {
    return call(this.#http, { method: 'POST', path: `${taskPath(IMAGE_PATH, id)}/cancel`, idempotent: true }, options, imageTaskData);
  }

  /** One page of this key's image tasks, newest first; iterate it for every task of every page. */
  async list(params: ImageListParams = {}, options?: RequestOptions): Promise<Page<ImageTask>> {
    const result = await this.#http.request({ method: 'GET', path: IMAGE_PATH, query: listQuery(params), idempotent: true }, options);
    const data = imageData(result);
    if (!isImageList(data)) throw unexpectedResponse(result, 'data {items, has_more, last_id}');
    return new Page({ data: data.items, hasMore: data.has_more, lastId: data.last_id }, (after) => this.list({ ...params, after }, options));
  }

  /** The task's states as they change (server-sent events, envelopes unwrapped); ends after the final state. */
  events(id: string, options?: EventsOptions): TaskEventStream<ImageTask> {
    const path = `${taskPath(IMAGE_PATH, id)}/events`;
    return new TaskEventStream(this.#http, { path, parse: imageEventTask, isFinal: (task) => isFinal(snapshot(task).status) }, options);
  }

  wait(id: string, options?: WaitOptions<ImageTask>): Promise<ImageTask> {
    return waitForTask(
      id,
      (request) => this.read(id, request),
      options,
      () => this.events(id, eventOptions(options)),
    );
  }

  async createAndWait(params: ImageCreateParams, options?: CreateAndWaitOptions<ImageTask>): Promise<ImageTask> {
    const created = await this.create(params, waitCreateOptions(options));
    return this.wait(created.task_id, options);
  }

  private send(body: object, options?: CreateOptions): APIPromise<ImageTaskCreated> {
    const { spec, request } = createSpec(IMAGE_PATH, body, options);
    return call(this.#http, spec, request, (result) => {
      const data = imageData(result);
      // A replayed create may answer with the whole task; its id is all a create returns.
      if (!isRecord(data) || typeof data['task_id'] !== 'string') throw unexpectedResponse(result, 'data.task_id');
      return { task_id: data['task_id'] };
    });
  }

  private async read(id: string, options?: RequestOptions): Promise<{ task: ImageTask; headers: Headers }> {
    const result = await this.#http.request({ method: 'GET', path: taskPath(IMAGE_PATH, id), idempotent: true }, options);
    return { task: imageTaskData(result), headers: result.headers };
  }
}

/** `client.models`: `GET /v1/models` and `GET /v1/models/{id}`, each with its JSON Schema. */
export class Models {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  async list(options?: RequestOptions): Promise<ModelInfo[]> {
    const result = await this.#http.request({ method: 'GET', path: '/v1/models', idempotent: true }, options);
    const data = isRecord(result.body) ? result.body['data'] : undefined;
    if (!Array.isArray(data) || !data.every(isModelInfo)) throw unexpectedResponse(result, 'a list of models');
    return data;
  }

  /** Ids contain slashes, which stay literal in the path. */
  async retrieve(id: string, options?: RequestOptions): Promise<ModelInfo> {
    if (id === '') throw new MediagateError('A model id is required.');
    const path = `/v1/models/${id.split('/').map(encodeURIComponent).join('/')}`;
    const result = await this.#http.request({ method: 'GET', path, idempotent: true }, options);
    if (!isModelInfo(result.body)) throw unexpectedResponse(result, 'a model');
    return result.body;
  }
}
