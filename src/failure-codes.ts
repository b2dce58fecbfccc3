/**
 * Why a task failed: the `error.code` of a failed task (its `error.type` is `generation_error`),
 * beside the API's request error codes (errors.ts). Engines throw them (EngineError), the worker
 * pool and TaskService record them; tests assert them. A new failure is a new entry here.
 */

/** The upstream channels' failures (docs/guides/channels.md#upstream-failure-codes); channels/failure.ts types its codes from these. */
export const CHANNEL_FAILURE_CODES = [
  /** The upstream failed the task. */
  'upstream_error',
  /** The upstream's moderation refused the input or the output. */
  'content_policy_violation',
  /** The upstream task ran past the channel's `timeout_s`. */
  'upstream_timeout',
  /** No target of the channel would accept the task. */
  'upstream_unavailable',
  /** A submission's outcome is unknown and resubmitting could run it twice. */
  'upstream_submission_unknown',
  /** The upstream's file was missing, too large or not the promised media. */
  'output_invalid',
] as const;

export const TASK_FAILURE_CODES = [
  // Engines, while rendering.
  /** An input (image, mask, parameter) could not be read or decoded. */
  'invalid_input',
  /** A value the model accepts but this engine cannot render (e.g. a duration past its limit). */
  'unsupported_value',
  /** An https:// input could not be fetched (network, HTTP status, size, redirects). */
  'input_fetch_failed',
  /** An https:// input points to an address the fetch policy refuses: a client should not retry. */
  'input_refused',
  /** The render ran past MEDIAGATE_RENDER_TIMEOUT_S. */
  'timeout',
  /** Anything else (also a task whose workers stopped MEDIAGATE_MAX_ATTEMPTS times). */
  'generation_failed',
  // The worker pool, after the render.
  /** The render was done, but the media store stayed unreachable for MEDIAGATE_STORAGE_RETRY_S. */
  'storage_unavailable',
  // Upstream channels.
  ...CHANNEL_FAILURE_CODES,
] as const;

export type TaskFailureCode = (typeof TASK_FAILURE_CODES)[number];

export function isTaskFailureCode(value: string): value is TaskFailureCode {
  return (TASK_FAILURE_CODES as readonly string[]).includes(value);
}
