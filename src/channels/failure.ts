/**
 * How an upstream failure reaches our task (CHANNELS.md section 2). There is no task-wide
 * failure code type yet, so the channel codes live here; the lifecycle puts them in the task's
 * `error` with `type` `generation_error`.
 */

export type ChannelFailureCode =
  /** The upstream failed the job. */
  | 'upstream_error'
  /** Its moderation refused the input or the output. */
  | 'content_policy_violation'
  /** It ran past the channel's `timeout_s`. */
  | 'upstream_timeout'
  /** No target of the route would accept it. */
  | 'upstream_unavailable'
  /** The submission's answer was lost and could not be reconciled. */
  | 'upstream_submission_unknown'
  /** The upstream's file was missing, too large or not the promised media. */
  | 'output_invalid';

export const CHANNEL_FAILURE_CODES: readonly ChannelFailureCode[] = [
  'upstream_error',
  'content_policy_violation',
  'upstream_timeout',
  'upstream_unavailable',
  'upstream_submission_unknown',
  'output_invalid',
];

/**
 * A failure as an adapter reports it. `code` is a ChannelFailureCode, except through a
 * `mediagate` channel, where the upstream's own code (this interface's vocabulary already) is
 * kept, and for `rejected` submits, where it may be a validation code (`unsupported_value`).
 */
export interface UpstreamFailure {
  readonly code: string;
  /** The parameter at fault, '' when none. */
  readonly param: string;
  /** What the upstream said, with its request id; never a credential or an internal host. */
  readonly message: string;
  readonly requestId?: string;
}

export function failure(code: ChannelFailureCode | string, message: string, param = '', requestId?: string): UpstreamFailure {
  return requestId === undefined ? { code, param, message } : { code, param, message, requestId };
}
