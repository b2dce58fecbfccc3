/**
 * The contract between the upstream lifecycle (scheduler, task store) and one protocol adapter.
 *
 * Glossary
 * - channel: one configured upstream (docs/guides/channels.md#configuration), reached through a protocol.
 * - adapter: the module for one protocol; pure mapping of our parameters, statuses and errors to
 *   and from the upstream's, plus the HTTP calls. It holds no state between calls: everything it
 *   needs comes in the context, the job or the upstream id, so any process can poll any task.
 * - upstream id: the opaque string an adapter returns on acceptance and receives back for poll,
 *   cancel. An adapter may compose it (e.g. fal: `app-path|request-id`); at most 512 characters.
 * - accepted: the upstream created a (paid) job. From then on the task never goes to another
 *   target and is never submitted again (docs/guides/channels.md#what-an-operator-can-rely-on).
 *
 * Rules every adapter keeps (the lifecycle relies on them):
 * - Adapters never throw for anything the upstream or the network does: every answer is one of
 *   the outcome values below. A throw is a bug; the lifecycle treats it as `unknown` on submit
 *   (never risk a second paid job) and `transient` on poll.
 * - The API key is sent only through `ctx.http` (which refuses any other origin), never put in
 *   an outcome, a message or a log line.
 * - Every upstream status word is mapped; an unknown word is `running` and logged once per poll.
 * - A parameter the upstream cannot express is never dropped silently: it is mapped, or the
 *   submit is `rejected` (code `unsupported_value`, param named) before any request is sent, or
 *   it is documented in the adapter's `paramMapping` as ignored with the reason.
 */
import type { FormData } from 'undici';
import type { ModelKind, ResolvedParams } from '../catalog/index.js';
import type { UpstreamFailure } from './failure.js';
import type { TokenOutcome } from './google-auth.js';
import type { ParamProblem, TargetProfile } from './profiles.js';

import type { ProtocolName } from './names.js';

export type { ProtocolName };

// ---------------------------------------------------------------------------------------------
// What an adapter is given
// ---------------------------------------------------------------------------------------------

/** One task, as the lifecycle hands it to an adapter. */
export interface ChannelJob {
  /** Our task id. The `mediagate` protocol sends it as `Idempotency-Key`; others may use it as a client reference. */
  readonly taskId: string;
  readonly kind: ModelKind;
  /** The public model id (the catalog row's id). The upstream's model name is `ctx.upstreamModel`. */
  readonly model: string;
  /** The catalog's resolved parameters (validated, defaults applied), as stored on the task. */
  readonly params: ResolvedParams;
  /** For `reconcile`: when the lost submission was sent (ms since the epoch), to search a task list around it. */
  readonly submittedAt?: number;
}

export type HttpMethod = 'GET' | 'POST' | 'PUT' | 'DELETE';

export interface HttpCall {
  readonly method: HttpMethod;
  /** A path joined to the channel's base_url (`/api/v1/tasks/x`), or an absolute URL on the channel's origin. */
  readonly path: string;
  readonly headers?: Readonly<Record<string, string>>;
  /** Sent as `application/json`. At most one of `json`, `form`. */
  readonly json?: unknown;
  /** Sent as `multipart/form-data` (PixVerse upload); undici's FormData. */
  readonly form?: FormData;
  /** Deadline for the whole call; default the channel's request timeout (30 s). */
  readonly timeoutMs?: number;
  /** A larger cap on the answer than the default 8 MiB (Vertex answers a finished video inline, in Base64). */
  readonly maxBytes?: number;
}

/**
 * The result of one HTTP call, as a value. The split between `not_sent` and `lost` is what makes
 * one paid job per task possible: only `not_sent` proves the upstream never saw the request.
 */
export type HttpOutcome =
  | {
      readonly kind: 'response';
      readonly status: number;
      /** Lower-case names; repeated headers joined with ', '. */
      readonly headers: Readonly<Record<string, string>>;
      /** The body parsed as JSON, or undefined when it is not JSON. */
      readonly json: unknown;
      /** The body as text (capped at 1 MiB; longer bodies are cut). */
      readonly text: string;
      /** From `Retry-After` (seconds or HTTP date), when present and sane. */
      readonly retryAfterMs?: number;
    }
  /** The request never reached the upstream: DNS failure, connection refused, TLS failure, connect timeout, wrong origin. */
  | { readonly kind: 'not_sent'; readonly reason: string }
  /** The request was (or may have been) sent, but no complete answer came: reset, timeout after send, truncated body. */
  | { readonly kind: 'lost'; readonly reason: string };

export interface ChannelHttp {
  request(call: HttpCall): Promise<HttpOutcome>;
}

/** A media input value (data URL or https URL, as the catalog accepted it) turned into what an upstream needs. */
export interface ChannelMedia {
  /** 'https' when the value is a URL the upstream may fetch itself, 'data' for a data URL. */
  kind(value: string): 'https' | 'data';
  /** The bytes: a data URL decoded, or an https URL fetched under the media fetch policy. Throws MediaInputError. */
  bytes(value: string): Promise<{ readonly bytes: Buffer; readonly mime: string }>;
  /** A data URL for the value (an https value is fetched and encoded). Throws MediaInputError. */
  dataUrl(value: string): Promise<string>;
  /**
   * A URL the upstream can fetch: an https value as is; a data URL stored and served as a
   * short-lived signed URL of ours when the deployment has a public base URL, else null.
   */
  publicUrl(value: string): Promise<string | null>;
}

/** A media input could not be turned into what the upstream needs; the adapter answers `rejected` with it. */
export class MediaInputError extends Error {
  override readonly name = 'MediaInputError';
  constructor(
    /** The parameter at fault, e.g. `image` or `images[2]`. */
    readonly param: string,
    message: string,
  ) {
    super(message);
  }
}

/** A pino-compatible subset; adapters log upstream request ids and status words, never keys or prompts. */
export interface ChannelLog {
  debug(obj: object, msg?: string): void;
  info(obj: object, msg?: string): void;
  warn(obj: object, msg?: string): void;
}

export interface ChannelContext {
  /** The configured channel name (for logs and messages). */
  readonly channel: string;
  /** base_url without a trailing slash. */
  readonly baseUrl: string;
  /** The key, read from the channel's `api_key_env`. Put only in request headers; never logged. */
  readonly apiKey: string;
  /** The target's `upstream_model` (defaults to the public model id). */
  readonly upstreamModel: string;
  /** The target's profile (declared in the channels file, else built in for the model), when it has one. */
  readonly profile?: TargetProfile | undefined;
  readonly http: ChannelHttp;
  readonly media: ChannelMedia;
  readonly log: ChannelLog;
  /** Milliseconds since the epoch; injectable for fakes and benches. */
  now(): number;
  /** A `vertex` channel's project, location and OAuth access tokens (google-auth.ts); absent elsewhere. */
  readonly google?: GoogleAccess | undefined;
  /** A `kling` channel's signed token (kling-auth.ts), renewed before it expires; absent elsewhere. */
  readonly kling?: { token(): string } | undefined;
}

export interface GoogleAccess {
  readonly project: string;
  readonly location: string;
  /** A cached access token, renewed shortly before it expires; never logged. */
  token(): Promise<TokenOutcome>;
}

// ---------------------------------------------------------------------------------------------
// What an adapter answers
// ---------------------------------------------------------------------------------------------

export type SubmitOutcome =
  /** The upstream created the job. The lifecycle stores `upstreamId` before anything else. */
  | { readonly outcome: 'accepted'; readonly upstreamId: string; readonly requestId?: string }
  /**
   * The upstream refused before accepting, for reasons of its own (connection refused, 429, 5xx,
   * bad channel key, quota): nothing was created; the lifecycle fails over to the next target.
   */
  | { readonly outcome: 'refused'; readonly reason: string; readonly retryAfterMs?: number; readonly requestId?: string }
  /** The upstream refused the request itself (moderation, invalid parameter): final, no failover. */
  | { readonly outcome: 'rejected'; readonly error: UpstreamFailure }
  /** Sent, but the answer was lost: the job may exist. The lifecycle reconciles or fails `upstream_submission_unknown`. */
  | { readonly outcome: 'unknown'; readonly reason: string };

export interface UpstreamOutput {
  readonly type: 'video' | 'image';
  /**
   * Where to fetch the file; copied by output-copy.ts before the task completes. A `data:` URL
   * (Vertex's inline Base64 answer) is decoded and checked the same way.
   */
  readonly url: string;
  /**
   * Headers the copy sends only to the channel's own origin, never across a redirect to another
   * host (the Gemini API's file download needs the channel key). Never stored.
   */
  readonly headers?: Readonly<Record<string, string>>;
}

export type PollOutcome =
  | {
      readonly state: 'queued' | 'running';
      /** 0..100 when the upstream gives one; the lifecycle keeps it monotonic and below 100. */
      readonly progress?: number;
      /** The upstream's own status word, for logs and metrics (never shown to clients). */
      readonly upstreamWord: string;
    }
  | {
      readonly state: 'succeeded';
      readonly outputs: readonly UpstreamOutput[];
      readonly upstreamWord: string;
      /** What the upstream says the job used, when it says (for usage records; never shown to clients as is). */
      readonly reportedUsage?: ReportedUsage;
    }
  | { readonly state: 'failed'; readonly error: UpstreamFailure; readonly upstreamWord: string }
  /**
   * The upstream does not know the id (404, DashScope UNKNOWN). Right after acceptance this can be
   * replication lag: the lifecycle keeps polling for a grace period, then fails `upstream_error`.
   */
  | { readonly state: 'not_found'; readonly upstreamWord: string }
  /** 429: poll again after `retryAfterMs` (or backoff with jitter). Never a failure by itself. */
  | { readonly state: 'throttled'; readonly retryAfterMs?: number }
  /** 5xx, network, unparseable answer: poll again with backoff; `timeout_s` still bounds the task. */
  | { readonly state: 'transient'; readonly reason: string };

/**
 * Usage as the upstream reports it on a finished job, each field only when that protocol gives
 * it: Replicate `metrics.predict_time`, Ark `usage.completion_tokens`/`total_tokens`, DashScope
 * `usage.video_duration` (or `duration`), `video_count`, `image_count`, MiniMax v2
 * `task.usage.output_seconds`, fal `metrics.inference_time`.
 */
export interface ReportedUsage {
  /** Seconds of media produced (DashScope video duration, MiniMax output seconds). */
  readonly seconds?: number;
  /** Billed tokens (Ark). */
  readonly tokens?: number;
  /** Compute time the upstream measured, in seconds (Replicate predict_time, fal inference_time). */
  readonly predict_time_s?: number;
  readonly videos?: number;
  readonly images?: number;
  /** Units the provider deducted for the job, in its own currency of credits (Kling `final_unit_deduction`). */
  readonly credits?: number;
}

/** One input of a model's published schema, as JSON Schema says it. */
export interface PublishedProperty {
  readonly type?: string;
  readonly enum?: readonly unknown[];
  readonly minimum?: number;
  readonly maximum?: number;
}

/** A model's published input schema: its inputs and the required ones. */
export interface PublishedInput {
  readonly properties: Readonly<Record<string, PublishedProperty>>;
  readonly required: readonly string[];
}

export type SchemaOutcome = { readonly ok: true; readonly schema: PublishedInput } | { readonly ok: false; readonly reason: string };

/** The target a create or submit is checked against (no I/O: the check runs before any request). */
export interface TargetSpec {
  readonly channel: string;
  readonly upstreamModel: string;
  readonly profile?: TargetProfile | undefined;
}

/** `requestId`: the upstream's id of the cancel request itself, when it gives one (logged). */
export type CancelOutcome =
  | { readonly outcome: 'cancelled'; readonly requestId?: string }
  /** The upstream does not cancel in this state (DashScope: only PENDING; Ark: only queued). */
  | { readonly outcome: 'not_cancellable'; readonly reason: string; readonly requestId?: string }
  | { readonly outcome: 'transient'; readonly reason: string; readonly requestId?: string };

export type ReconcileOutcome =
  /** The lost submission did create a job: store this id and poll it. */
  | { readonly outcome: 'found'; readonly upstreamId: string }
  /** The upstream proves no job exists for this task: submitting again (same target) is safe. */
  | { readonly outcome: 'absent' }
  /** Cannot tell now (network, 409 while the first request is in progress): ask again later, within a deadline. */
  | { readonly outcome: 'undecided'; readonly reason: string };

export type ProbeOutcome = { readonly ok: true; readonly detail: string } | { readonly ok: false; readonly reason: string };

/** One row of an adapter's documented mapping: what becomes of a catalog parameter. */
export interface ParamMapping {
  /** Catalog parameter, e.g. `image`, `images`, `aspect_ratio`. */
  readonly param: string;
  /** The upstream field(s), or '' when it is not sent. */
  readonly upstream: string;
  /** 'mapped': sent; 'refused': the submit is rejected `unsupported_value` when the parameter is set; 'ignored': documented as not sent. */
  readonly handling: 'mapped' | 'refused' | 'ignored';
  readonly note?: string;
}

export interface ProtocolAdapter {
  readonly protocol: ProtocolName;
  /** Documentation and the docs table; tests check that every catalog parameter has a row. */
  readonly paramMapping: readonly ParamMapping[];
  /**
   * What this target cannot take, without any I/O: the adapter's own refusals and the target
   * profile's. Run at create for the route's first target (a 400 `unsupported_value` naming the
   * parameter) and again by `submit` (a failover target is checked there).
   */
  check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']): ParamProblem | undefined;
  submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome>;
  poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome>;
  /** Absent when the protocol documents no cancel. */
  cancel?(ctx: ChannelContext, upstreamId: string): Promise<CancelOutcome>;
  /** Absent when a lost submission cannot be found again: the task then fails `upstream_submission_unknown`. */
  reconcile?(ctx: ChannelContext, job: ChannelJob): Promise<ReconcileOutcome>;
  /** One cheap authenticated call (`mediagate channels check --probe`). */
  probe(ctx: ChannelContext): Promise<ProbeOutcome>;
  /** The target model's published input schema, where the provider publishes one (`--probe` compares the mapping with it). */
  inputSchema?(ctx: ChannelContext): Promise<SchemaOutcome>;
}
