import { apiErrorFrom, MediagateError } from './errors.js';
import { unexpectedResponse, type HttpCore, type HttpResult } from './http.js';
import type { ImageCreateParams, VideoCreateParams } from './models.generated.js';
import type { ImageTask, ImageTaskCreated, ModelInfo, RequestOptions, UncheckedParams, VideoTask, WaitOptions } from './types.js';
import { waitForTask } from './wait.js';

const VIDEO_PATH = '/v1/video/generations';
const IMAGE_PATH = '/v1/images/generations/async';

function isRecord(value: unknown): value is Readonly<Record<string, unknown>> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

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

/** `client.videos`: `POST /v1/video/generations` and `GET /v1/video/generations/{id}`. */
export class Videos {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /** Creates a task and returns it queued. Not retried except where it cannot have run (see RequestSpec.idempotent). */
  create(params: VideoCreateParams, options?: RequestOptions): Promise<VideoTask> {
    return this.send(params, options);
  }

  /** `create` with parameters checked only by the server (built at run time, or a model newer than this SDK). */
  createUnchecked(params: UncheckedParams, options?: RequestOptions): Promise<VideoTask> {
    return this.send(params, options);
  }

  async get(id: string, options?: RequestOptions): Promise<VideoTask> {
    return (await this.read(id, options)).task;
  }

  /** Polls until the task completes (resolves) or fails (TaskFailedError). */
  wait(id: string, options?: WaitOptions<VideoTask>): Promise<VideoTask> {
    return waitForTask(id, (request) => this.read(id, request), options);
  }

  async createAndWait(params: VideoCreateParams, options?: WaitOptions<VideoTask>): Promise<VideoTask> {
    const task = await this.create(params, { ...options?.request, ...(options?.signal ? { signal: options.signal } : {}) });
    return this.wait(task.id, options);
  }

  private async send(body: object, options?: RequestOptions): Promise<VideoTask> {
    return videoTask(await this.#http.request({ method: 'POST', path: VIDEO_PATH, body, idempotent: false }, options));
  }

  private async read(id: string, options?: RequestOptions): Promise<{ task: VideoTask; headers: Headers }> {
    const result = await this.#http.request({ method: 'GET', path: taskPath(VIDEO_PATH, id), idempotent: true }, options);
    return { task: videoTask(result), headers: result.headers };
  }
}

/** `client.images`: `POST /v1/images/generations/async` and `GET /v1/images/generations/async/{id}` (envelopes unwrapped). */
export class Images {
  readonly #http: HttpCore;

  constructor(http: HttpCore) {
    this.#http = http;
  }

  /** Creates a task; returns its id. Not retried except where it cannot have run. */
  create(params: ImageCreateParams, options?: RequestOptions): Promise<ImageTaskCreated> {
    return this.send(params, options);
  }

  /** `create` with parameters checked only by the server. */
  createUnchecked(params: UncheckedParams, options?: RequestOptions): Promise<ImageTaskCreated> {
    return this.send(params, options);
  }

  async get(id: string, options?: RequestOptions): Promise<ImageTask> {
    return (await this.read(id, options)).task;
  }

  wait(id: string, options?: WaitOptions<ImageTask>): Promise<ImageTask> {
    return waitForTask(id, (request) => this.read(id, request), options);
  }

  async createAndWait(params: ImageCreateParams, options?: WaitOptions<ImageTask>): Promise<ImageTask> {
    const created = await this.create(params, { ...options?.request, ...(options?.signal ? { signal: options.signal } : {}) });
    return this.wait(created.task_id, options);
  }

  private async send(body: object, options?: RequestOptions): Promise<ImageTaskCreated> {
    const result = await this.#http.request({ method: 'POST', path: IMAGE_PATH, body, idempotent: false }, options);
    const data = imageData(result);
    if (!isRecord(data) || typeof data['task_id'] !== 'string') throw unexpectedResponse(result, 'data.task_id');
    return { task_id: data['task_id'] };
  }

  private async read(id: string, options?: RequestOptions): Promise<{ task: ImageTask; headers: Headers }> {
    const result = await this.#http.request({ method: 'GET', path: taskPath(IMAGE_PATH, id), idempotent: true }, options);
    const data = imageData(result);
    if (!isImageTask(data)) throw unexpectedResponse(result, 'an image task in data');
    return { task: data, headers: result.headers };
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
