/**
 * How an upstream failure reaches our task (docs/guides/channels.md#upstream-failure-codes). The codes are the channel
 * part of the task failure codes (failure-codes.ts); the lifecycle puts them in the task's
 * `error` with `type` `generation_error`.
 */
import { CHANNEL_FAILURE_CODES } from '../failure-codes.js';

export { CHANNEL_FAILURE_CODES };

export type ChannelFailureCode = (typeof CHANNEL_FAILURE_CODES)[number];

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

/** `code`: a ChannelFailureCode, or another code as UpstreamFailure says. */
export function failure(code: string, message: string, param = '', requestId?: string): UpstreamFailure {
  return requestId === undefined ? { code, param, message } : { code, param, message, requestId };
}
