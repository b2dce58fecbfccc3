/**
 * The `mediagate` protocol: the seed interface itself (another mediagate, or any service that
 * speaks it). Parameters travel as they are (the upstream validates the same catalog), our task
 * id travels as `Idempotency-Key`, and the upstream's own `error` (code, param) is kept.
 *
 * Upstream ids are `v:<id>` or `i:<id>`: the two families poll different paths.
 */
import {
  asArray,
  asRecord,
  asString,
  clip,
  pick,
  pollByHttpClass,
  positive,
  submitByHttpClass,
  unknownWord,
  upstreamError,
  upstreamProgress,
  validUpstreamId,
  withRequestId,
} from '../adapter-kit.js';
import { failure, type UpstreamFailure } from '../failure.js';
import type {
  CancelOutcome,
  ChannelContext,
  ChannelJob,
  HttpOutcome,
  ParamMapping,
  PollOutcome,
  ProtocolAdapter,
  ReconcileOutcome,
  ReportedUsage,
  SubmitOutcome,
  UpstreamOutput,
} from '../protocol.js';

const VIDEO_PATH = '/v1/video/generations';
const IMAGE_PATH = '/v1/images/generations/async';

/** Resolved image parameters that are ours (derived), not the interface's: never sent. */
const IMAGE_DERIVED = new Set(['output_format', 'n', 'model']);

function headers(ctx: ChannelContext, taskId?: string): Record<string, string> {
  return { authorization: `Bearer ${ctx.apiKey}`, ...(taskId === undefined ? {} : { 'idempotency-key': taskId }) };
}

/** The request body: the resolved parameters as the client could have sent them. */
export function mediagateBody(ctx: ChannelContext, job: ChannelJob): Record<string, unknown> {
  const body: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(job.params)) {
    if (job.kind === 'image' && IMAGE_DERIVED.has(key)) continue;
    if (key === 'model') continue;
    body[key] = value;
  }
  // A resolved image carries both `size` (when given) and width/height; the interface refuses both together.
  if (job.kind === 'image' && body['size'] !== undefined) {
    delete body['width'];
    delete body['height'];
  }
  body['model'] = ctx.upstreamModel;
  return body;
}

function requestIdOf(answer: HttpOutcome): string | undefined {
  return answer.kind === 'response' ? answer.headers['x-request-id'] : undefined;
}

/** The upstream's error object (video: `{error:{...}}`; image: `{code, message}`), kept as it is. */
function errorOf(answer: HttpOutcome, requestId: string | undefined): UpstreamFailure {
  const json = answer.kind === 'response' ? answer.json : undefined;
  const video = asRecord(pick(json, 'error'));
  const code = asString(video?.['code']) ?? asString(pick(json, 'code')) ?? 'upstream_error';
  const message = asString(video?.['message']) ?? asString(pick(json, 'message')) ?? `HTTP ${answer.kind === 'response' ? answer.status : 0}`;
  const param = asString(video?.['param']) ?? '';
  return failure(code, withRequestId(clip(message), requestId), param, requestId);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const answer = await ctx.http.request({
    method: 'POST',
    path: job.kind === 'video' ? VIDEO_PATH : IMAGE_PATH,
    headers: headers(ctx, job.taskId),
    json: mediagateBody(ctx, job),
  });
  return submitAnswer(job, answer);
}

function submitAnswer(job: ChannelJob, answer: HttpOutcome): SubmitOutcome {
  const requestId = requestIdOf(answer);
  // 409 idempotency_key_in_use: an earlier request with our key is still being processed upstream.
  if (answer.kind === 'response' && answer.status === 409) return { outcome: 'unknown', reason: 'idempotency key in use upstream' };
  const early = submitByHttpClass(answer, () => errorOf(answer, requestId), requestId);
  if (early !== undefined) return early;
  const json = answer.kind === 'response' ? answer.json : undefined;
  const id = validUpstreamId(job.kind === 'video' ? pick(json, 'id') : pick(json, 'data.task_id'));
  if (id === undefined) {
    // A 2xx without an id: the job may exist; never submit again blindly.
    return { outcome: 'unknown', reason: 'HTTP 2xx without a task id' };
  }
  return { outcome: 'accepted', upstreamId: `${job.kind === 'video' ? 'v' : 'i'}:${id}`, ...(requestId === undefined ? {} : { requestId }) };
}

/**
 * A final task's `usage` as another mediagate reports it: the billed `seconds` of the delivered
 * video (read from the file) and the count of `images`. Its `cost` is that deployment's price,
 * not ours, so it is not carried over.
 */
function usageOf(usage: unknown): ReportedUsage | undefined {
  const seconds = positive(pick(usage, 'seconds'));
  const images = positive(pick(usage, 'images'));
  const out = { ...(seconds === undefined ? {} : { seconds }), ...(images === undefined ? {} : { images }) };
  return Object.keys(out).length === 0 ? undefined : out;
}

function succeeded(outputs: readonly UpstreamOutput[], upstreamWord: string, reportedUsage: ReportedUsage | undefined): PollOutcome {
  return reportedUsage === undefined ? { state: 'succeeded', outputs, upstreamWord } : { state: 'succeeded', outputs, upstreamWord, reportedUsage };
}

function pollVideo(ctx: ChannelContext, json: unknown, requestId: string | undefined): PollOutcome {
  const status = asString(pick(json, 'status')) ?? '';
  const progress = upstreamProgress(pick(json, 'progress'));
  const withProgress = progress === undefined ? {} : { progress };
  switch (status) {
    case 'queued':
      return { state: 'queued', upstreamWord: status, ...withProgress };
    case 'processing':
      return { state: 'running', upstreamWord: status, ...withProgress };
    case 'completed': {
      const outputs = asArray(pick(json, 'outputs'))
        .map((o) => asString(pick(o, 'url')))
        .filter((u): u is string => u !== undefined)
        .map((url) => ({ type: 'video' as const, url }));
      return succeeded(outputs, status, usageOf(pick(json, 'usage')));
    }
    case 'failed': {
      const error = asRecord(pick(json, 'error'));
      const code = asString(error?.['code']) ?? 'upstream_error';
      const message = asString(error?.['message']) ?? 'the upstream failed the task';
      return {
        state: 'failed',
        error: failure(code, withRequestId(clip(message), requestId), asString(error?.['param']) ?? '', requestId),
        upstreamWord: status,
      };
    }
    case 'cancelled':
      return { state: 'failed', error: upstreamError('the upstream task was cancelled', requestId), upstreamWord: status };
    default:
      return unknownWord(ctx, status, progress);
  }
}

function pollImage(ctx: ChannelContext, json: unknown, requestId: string | undefined): PollOutcome {
  const status = asString(pick(json, 'data.status')) ?? '';
  const progress = upstreamProgress(pick(json, 'data.progress'));
  const withProgress = progress === undefined ? {} : { progress };
  switch (status) {
    case 'QUEUED':
    case 'NOT_START':
    case 'SUBMITTED':
      return { state: 'queued', upstreamWord: status, ...withProgress };
    case 'IN_PROGRESS':
      return { state: 'running', upstreamWord: status, ...withProgress };
    case 'SUCCESS': {
      const outputs = asArray(pick(json, 'data.outputs'))
        .map(asString)
        .filter((u): u is string => u !== undefined)
        .map((url) => ({ type: 'image' as const, url }));
      return succeeded(outputs, status, usageOf(pick(json, 'data.usage')));
    }
    case 'FAILURE': {
      // `data.error` keeps the upstream's own code and param; an upstream without it gives only the text.
      const error = asRecord(pick(json, 'data.error'));
      const message = asString(error?.['message']) ?? (asString(pick(json, 'data.fail_reason')) || 'the upstream failed the task');
      const code = asString(error?.['code']);
      return {
        state: 'failed',
        error:
          code === undefined
            ? upstreamError(message, requestId)
            : failure(code, withRequestId(clip(message), requestId), asString(error?.['param']) ?? '', requestId),
        upstreamWord: status,
      };
    }
    case 'CANCELLED':
      return { state: 'failed', error: upstreamError('the upstream task was cancelled', requestId), upstreamWord: status };
    default:
      return unknownWord(ctx, status, progress);
  }
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const [family, ...rest] = upstreamId.split(':');
  const id = rest.join(':');
  const video = family === 'v';
  const answer = await ctx.http.request({
    method: 'GET',
    path: `${video ? VIDEO_PATH : IMAGE_PATH}/${encodeURIComponent(id)}`,
    headers: headers(ctx),
  });
  const early = pollByHttpClass(answer);
  if (early !== undefined) return early;
  const json = answer.kind === 'response' ? answer.json : undefined;
  if (json === undefined) return { state: 'transient', reason: 'answer is not JSON' };
  return video ? pollVideo(ctx, json, requestIdOf(answer)) : pollImage(ctx, json, requestIdOf(answer));
}

/**
 * decisions 8.1: `POST .../{task_id}/cancel`. 200 is a cancelled task (or one cancelled
 * already); 409 task_not_cancellable is a task that already finished; 404 an id it no longer knows.
 */
async function cancel(ctx: ChannelContext, upstreamId: string): Promise<CancelOutcome> {
  const [family, ...rest] = upstreamId.split(':');
  const id = rest.join(':');
  const answer = await ctx.http.request({
    method: 'POST',
    path: `${family === 'v' ? VIDEO_PATH : IMAGE_PATH}/${encodeURIComponent(id)}/cancel`,
    headers: headers(ctx),
  });
  if (answer.kind !== 'response') return { outcome: 'transient', reason: answer.reason };
  const requestId = requestIdOf(answer);
  const withId = requestId === undefined ? {} : { requestId };
  if (answer.status === 200) return { outcome: 'cancelled', ...withId };
  if (answer.status === 409 || answer.status === 404) {
    return { outcome: 'not_cancellable', reason: `HTTP ${answer.status} ${errorOf(answer, requestId).code}`, ...withId };
  }
  return { outcome: 'transient', reason: `HTTP ${answer.status}`, ...withId };
}

/**
 * A lost submission is found again by sending it once more with the same Idempotency-Key: the
 * upstream answers the original task (or creates it, if the first request never arrived, which
 * is just as right). Only a replay header or a fresh create counts; anything else is undecided.
 */
async function reconcile(ctx: ChannelContext, job: ChannelJob): Promise<ReconcileOutcome> {
  const answer = await ctx.http.request({
    method: 'POST',
    path: job.kind === 'video' ? VIDEO_PATH : IMAGE_PATH,
    headers: headers(ctx, job.taskId),
    json: mediagateBody(ctx, job),
  });
  if (answer.kind === 'response' && answer.status === 200 && answer.headers['idempotent-replayed'] !== 'true') {
    // Either the first request never arrived (this is the only job), or the upstream ignores
    // Idempotency-Key (decisions 8.4) and this is a second job: say so where an operator looks.
    ctx.log.warn({ channel: ctx.channel, taskId: job.taskId }, 'reconcile: the upstream did not confirm a replay of the lost submission');
  }
  const outcome = submitAnswer(job, answer);
  if (outcome.outcome === 'accepted') return { outcome: 'found', upstreamId: outcome.upstreamId };
  return { outcome: 'undecided', reason: outcome.outcome === 'rejected' ? outcome.error.message : outcome.reason };
}

export const mediagateAdapter: ProtocolAdapter = {
  protocol: 'mediagate',
  paramMapping: [
    {
      param: '*',
      upstream: 'same name',
      handling: 'mapped',
      note: 'Every parameter travels as the client sent it (with defaults applied); the upstream validates the same catalog.',
    },
    { param: 'model', upstream: 'model', handling: 'mapped', note: "The target's upstream_model." },
    { param: 'width, height, size', upstream: 'size, or width and height', handling: 'mapped', note: 'size when the client gave it, else width and height.' },
    { param: 'output_format, n', upstream: '', handling: 'ignored', note: 'Derived by the catalog (png, 1); not request fields of the interface.' },
  ] satisfies readonly ParamMapping[],
  // The upstream validates the same catalog and answers its own 400s.
  check: () => undefined,
  submit,
  poll,
  cancel,
  reconcile,
  async probe(ctx) {
    const answer = await ctx.http.request({ method: 'GET', path: '/v1/models', headers: headers(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status !== 200) return { ok: false, reason: `HTTP ${answer.status}` };
    return { ok: true, detail: `${asArray(pick(answer.json, 'data')).length} models` };
  },
};
