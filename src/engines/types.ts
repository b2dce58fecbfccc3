import type { TaskFailureCode } from '../failure-codes.js';
/**
 * The contract between the worker (tasks/) and whatever turns resolved parameters into files.
 * An engine knows nothing of HTTP, the store or the queue: it gets a job, reports progress,
 * and either returns files written under `workDir` or throws an EngineError.
 */

/** Resolved request parameters as stored on the task (defaults applied). */
export type ResolvedParams = Readonly<Record<string, unknown>>;

/** What the engine needs to know about the model row to honour the output geometry. */
export interface RenderModelInfo {
  readonly id: string;
  readonly kind: 'video' | 'image';
  /** Aspect ratios the model lists (without `adaptive`); empty when the row lists none. */
  readonly aspectRatios: readonly string[];
  /** Whether rule 3 of the seed (vendord/v6/image-to-video input image limits) applies to `image`. */
  readonly checkImageRule3: boolean;
}

export interface RenderJob {
  readonly taskId: string;
  /** The API key id the task belongs to: anything kept between renders is scoped by it. */
  readonly owner: string;
  readonly model: RenderModelInfo;
  readonly params: ResolvedParams;
  /**
   * Inputs the gateway stored at creation appear in `params` as references, not data URLs:
   * this reads one's bytes (from disk, asynchronously), and answers undefined for any other
   * value (an https URL, a data URL). Absent: params hold no references.
   */
  readonly readInput?: (value: string) => Promise<Buffer | undefined>;
  /** A fresh, empty directory owned by this attempt; the engine writes its outputs here. */
  readonly workDir: string;
  readonly signal: AbortSignal;
  /** Called with an integer 0..99 as work advances; the worker writes 100 on completion. */
  readonly onProgress: (percent: number) => void;
  /**
   * The task's `https://` inputs, fetched before the render (the worker pool's fetch stage,
   * `Engine.fetchInputs`): bytes by URL. An input not here is loaded by the render itself.
   */
  readonly inputs?: FetchedInputs;
}

/** Inputs fetched ahead of a render: the bytes of each URL. */
export type FetchedInputs = ReadonlyMap<string, Buffer>;

/** What fetching a task's inputs needs: the job without its render parts. */
export type InputJob = Pick<RenderJob, 'taskId' | 'owner' | 'model' | 'params' | 'signal'>;

export interface RenderedFile {
  /** Absolute path of the file, inside the job's workDir. */
  readonly path: string;
  readonly type: 'video' | 'image';
  readonly contentType: 'video/mp4' | 'image/png';
  /** File extension without the dot: `mp4` or `png`. */
  readonly ext: string;
}

export interface RenderResult {
  readonly files: readonly RenderedFile[];
}

export interface Engine {
  readonly name: string;
  /**
   * The `https://` inputs `render` would fetch for these parameters (none: the task skips the
   * fetch stage). An engine without it fetches nothing ahead.
   */
  inputUrls?(job: Pick<RenderJob, 'model' | 'params'>): readonly string[];
  /**
   * Fetches those inputs, outside the render slots (the worker pool's fetch stage, bounded per
   * process and per key); a failure is an EngineError naming the field, as in `render`.
   */
  fetchInputs?(job: InputJob): Promise<FetchedInputs>;
  render(job: RenderJob): Promise<RenderResult>;
  close(): Promise<void>;
}

/**
 * A failure the client should see on the task: `code` is one of our generation codes
 * (`generation_failed`, `input_fetch_failed`, `invalid_input`, `unsupported_value`, `timeout`,
 * `upstream_error`) and `param` names the request field at fault ('' when none is).
 */
export class EngineError extends Error {
  override readonly name = 'EngineError';
  constructor(
    readonly code: TaskFailureCode,
    readonly param: string,
    message: string,
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}
