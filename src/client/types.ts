/**
 * Response shapes of the mediagate API (docs/interface.md), as the SDK returns them, and the
 * options of its calls. The request shapes are generated per model in models.generated.ts.
 *
 * Glossary
 * - family: `video` (`/v1/video/...`, the task object) or `image` (`/v1/images/...`, an envelope
 *   `{code, message, data}` that the SDK unwraps).
 * - snapshot: one observation of a task of either family in one shape (`TaskSnapshot`), used by
 *   progress callbacks and the CLI.
 */

/** Lifecycle of a task, in the video family's words (image statuses are mapped onto these). */
export type TaskStatus = 'queued' | 'processing' | 'completed' | 'failed' | 'cancelled';

export type TaskKind = 'video' | 'image';

/** The error object of a failed video task. */
export interface TaskError {
  readonly type: string;
  readonly code: string;
  readonly message: string;
  readonly param: string;
}

/** `GET /v1/video/generations/{id}`; timestamps are Unix seconds. */
export interface VideoTask {
  readonly id: string;
  readonly object: 'video.generation';
  readonly model: string;
  readonly status: TaskStatus;
  /** Empty until the task completes; then one `{type:'video', url}` (signed, no key needed). */
  readonly outputs: ReadonlyArray<{ readonly type: 'video'; readonly url: string }>;
  readonly created_at: number;
  readonly started_at: number | null;
  readonly completed_at: number | null;
  /** 0-100; null right after creation. */
  readonly progress: number | null;
  readonly error: TaskError | null;
}

export type ImageTaskStatus = 'QUEUED' | 'IN_PROGRESS' | 'SUCCESS' | 'FAILURE' | 'CANCELLED';

/** The `data` of `GET /v1/images/generations/async/{id}` (the SDK unwraps the envelope). */
export interface ImageTask {
  readonly task_id: string;
  readonly status: ImageTaskStatus;
  /** `"0%"` to `"100%"`. */
  readonly progress: string;
  /** URLs of the generated images (signed, no key needed); empty until SUCCESS. */
  readonly outputs: readonly string[];
  readonly submit_time: number;
  /** 0 until started. */
  readonly start_time: number;
  /** 0 until finished. */
  readonly finish_time: number;
  /** `""` unless the task failed. */
  readonly fail_reason: string;
}

/** The `data` of `POST /v1/images/generations/async`. */
export interface ImageTaskCreated {
  readonly task_id: string;
}

/** One task of either family, observed once, in one shape. */
export interface TaskSnapshot<T extends VideoTask | ImageTask = VideoTask | ImageTask> {
  readonly kind: TaskKind;
  readonly id: string;
  readonly status: TaskStatus;
  /** 0-100, or null when the server has not reported any. */
  readonly progress: number | null;
  /** Output URLs. */
  readonly outputs: readonly string[];
  readonly error: { readonly code: string; readonly param: string; readonly message: string } | null;
  /** The family's own object, as returned by `get`. */
  readonly task: T;
}

export interface ProgressEvent<T extends VideoTask | ImageTask = VideoTask | ImageTask> extends TaskSnapshot<T> {
  /** Milliseconds since the wait started. */
  readonly elapsedMs: number;
}

/** One model of `GET /v1/models`. */
export interface ModelInfo {
  readonly id: string;
  readonly object: 'model';
  readonly kind: TaskKind;
  /** The creation path, e.g. `/v1/video/generations`. */
  readonly endpoint: string;
  readonly description: string;
  /** The JSON Schema of the model's request body, the one the server validates with. */
  readonly schema: { readonly [key: string]: unknown };
}

/** Per-call options; each overrides the client's setting for this call only. */
export interface RequestOptions {
  readonly signal?: AbortSignal;
  /** Milliseconds before one HTTP attempt is abandoned with a TimeoutError. */
  readonly timeout?: number;
  /** Retries of this call (reads only; see ClientOptions.maxRetries). */
  readonly maxRetries?: number;
  readonly headers?: Readonly<Record<string, string>>;
}

/**
 * How `wait` and `createAndWait` poll. A poll that fails with a transient error (connection,
 * timeout, 429, 5xx) after its own retries is tried again at the next interval; five such polls in
 * a row end the wait with that error. Any other error ends it at once.
 */
export interface WaitOptions<T extends VideoTask | ImageTask> {
  /** Stops waiting (an AbortError carrying `taskId`); the task keeps running on the server. */
  readonly signal?: AbortSignal;
  /** Called with the first observation and then whenever the status or progress changes. */
  readonly onProgress?: (event: ProgressEvent<T>) => void;
  /**
   * Milliseconds between polls at first; default 1000. While nothing changes the interval grows
   * by half at each poll up to `maxPollInterval`, and it drops back when progress moves. A
   * `Retry-After` on a poll's response is honoured when longer.
   */
  readonly pollInterval?: number;
  /** Longest interval between polls, in milliseconds; default 10000. */
  readonly maxPollInterval?: number;
  /** Options of each HTTP call (timeout, retries, headers); its signal is `signal` above. */
  readonly request?: Omit<RequestOptions, 'signal'>;
}

/**
 * Parameters checked only by the server, for requests built at run time (a form, the CLI) or
 * a model newer than this SDK. Prefer the typed `create`.
 */
export interface UncheckedParams {
  readonly model: string;
  readonly prompt: string;
  readonly [key: string]: unknown;
}
