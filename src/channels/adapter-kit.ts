/**
 * Small pieces every adapter needs: reading untyped JSON safely, the HTTP-class rules shared by
 * all protocols (what a 429, a 5xx or a lost answer means on submit and on poll), progress and
 * unknown status words.
 */
import { failure, type UpstreamFailure } from './failure.js';
import type { ChannelContext, HttpOutcome, PollOutcome, SubmitOutcome, TargetSpec } from './protocol.js';
import type { ParamProblem } from './profiles.js';

export type Json = Readonly<Record<string, unknown>>;

export function asRecord(value: unknown): Json | undefined {
  return typeof value === 'object' && value !== null && !Array.isArray(value) ? (value as Json) : undefined;
}

export function asString(value: unknown): string | undefined {
  return typeof value === 'string' ? value : typeof value === 'number' && Number.isFinite(value) ? String(value) : undefined;
}

export function asNumber(value: unknown): number | undefined {
  if (typeof value === 'number' && Number.isFinite(value)) return value;
  if (typeof value === 'string' && value.trim() !== '') {
    const n = Number(value.trim().replace(/%$/, ''));
    return Number.isFinite(n) ? n : undefined;
  }
  return undefined;
}

export function asArray(value: unknown): readonly unknown[] {
  return Array.isArray(value) ? value : [];
}

/** Reads a dotted path (`output.task_id`) in untyped JSON. */
export function pick(value: unknown, path: string): unknown {
  let at: unknown = value;
  for (const key of path.split('.')) {
    const record = asRecord(at);
    if (record === undefined) return undefined;
    at = record[key];
  }
  return at;
}

/** Progress from an upstream (number or "40%"), clamped to 0..99: 100 is ours to give once the output is stored. */
export function upstreamProgress(value: unknown): number | undefined {
  const n = asNumber(value);
  if (n === undefined) return undefined;
  return Math.max(0, Math.min(99, Math.floor(n)));
}

/** An upstream id we are willing to store: non-empty printable text, at most 512 characters. */
export function validUpstreamId(value: unknown): string | undefined {
  const id = asString(value);
  return id !== undefined && id.length > 0 && id.length <= 512 && /^[\x21-\x7e]+$/.test(id) ? id : undefined;
}

/** Text of an upstream message made safe for a client: one line, bounded. */
export function clip(text: string, max = 300): string {
  const line = text.replace(/\s+/g, ' ').trim();
  return line.length > max ? `${line.slice(0, max)}…` : line;
}

/** Builds `"<what> (request id X)"` for failure messages. */
export function withRequestId(message: string, requestId: string | undefined): string {
  return requestId === undefined || requestId === '' ? message : `${message} (upstream request id ${requestId})`;
}

/**
 * The answer to a submit that was not a success, by HTTP class, shared by all protocols:
 * - not sent, 429, 5xx, 401/403 (our channel key), 402 (quota): `refused`, fail over;
 * - lost: `unknown`;
 * - any other 4xx: `rejected` with `rejection` (the adapter reads the upstream's error body).
 * Returns undefined for a 2xx response: the adapter reads it.
 */
export function submitByHttpClass(answer: HttpOutcome, rejection: (status: number) => UpstreamFailure, requestId?: string): SubmitOutcome | undefined {
  if (answer.kind === 'not_sent') return { outcome: 'refused', reason: `not sent: ${answer.reason}` };
  if (answer.kind === 'lost') return { outcome: 'unknown', reason: answer.reason };
  const { status } = answer;
  if (status >= 200 && status <= 299) return undefined;
  const rid = requestId === undefined ? {} : { requestId };
  if (status === 429) {
    return { outcome: 'refused', reason: 'HTTP 429', ...rid, ...(answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs }) };
  }
  if (status >= 500 || status === 401 || status === 403 || status === 402 || status === 408) {
    return { outcome: 'refused', reason: `HTTP ${status}`, ...rid };
  }
  return { outcome: 'rejected', error: rejection(status) };
}

/**
 * The answer to a poll that was not a success, by HTTP class: 429 throttled, 404 not found,
 * anything else (5xx, 401 while a key rotates, lost) transient; `timeout_s` bounds the task.
 * Returns undefined for a 2xx response.
 */
export function pollByHttpClass(answer: HttpOutcome): PollOutcome | undefined {
  if (answer.kind !== 'response') return { state: 'transient', reason: `${answer.kind}: ${answer.reason}` };
  const { status } = answer;
  if (status >= 200 && status <= 299) return undefined;
  if (status === 429) return answer.retryAfterMs === undefined ? { state: 'throttled' } : { state: 'throttled', retryAfterMs: answer.retryAfterMs };
  if (status === 404) return { state: 'not_found', upstreamWord: 'HTTP 404' };
  return { state: 'transient', reason: `HTTP ${status}` };
}

/** An upstream status word we do not know: logged, treated as still running (docs/guides/channels.md#what-an-operator-can-rely-on). */
export function unknownWord(ctx: ChannelContext, word: string, progress?: number): PollOutcome {
  ctx.log.warn({ channel: ctx.channel, upstreamWord: clip(word, 64) }, 'unknown upstream status word; treated as running');
  return progress === undefined ? { state: 'running', upstreamWord: word } : { state: 'running', progress, upstreamWord: word };
}

export function upstreamError(message: string, requestId?: string, param = ''): UpstreamFailure {
  return failure('upstream_error', withRequestId(clip(message), requestId), param, requestId);
}

export function policyViolation(message: string, requestId?: string, param = ''): UpstreamFailure {
  return failure('content_policy_violation', withRequestId(clip(message), requestId), param, requestId);
}

/** A media input value the adapter could not pass on (MediaInputError), as a final rejection. */
export function mediaRejection(param: string, message: string): SubmitOutcome {
  return { outcome: 'rejected', error: failure('invalid_parameter', clip(message), param) };
}

/** A parameter this upstream cannot express, refused before any request (never dropped silently): an adapter's `check` says so. */
export function cannotSend(target: TargetSpec, param: string, why: string): ParamProblem {
  return { param, message: `'${param}' cannot be sent through channel ${target.channel}: ${why}` };
}

/** A parameter the target cannot take (profiles.ts, or an adapter's own rule), as the submit's final rejection. */
export function problemRejection(problem: { readonly param: string; readonly message: string }): SubmitOutcome {
  return { outcome: 'rejected', error: failure('unsupported_value', clip(problem.message), problem.param) };
}

/** The target a context stands for, for `ProtocolAdapter.check`. */
export function specOf(ctx: ChannelContext): TargetSpec {
  return { channel: ctx.channel, upstreamModel: ctx.upstreamModel, profile: ctx.profile };
}

/** A positive finite number from untyped JSON, for reported usage: a reported 0 says nothing, so the next field is tried. */
export function positive(value: unknown): number | undefined {
  const n = asNumber(value);
  return n !== undefined && n > 0 ? n : undefined;
}
