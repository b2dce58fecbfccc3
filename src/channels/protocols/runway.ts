/**
 * `runway`: Runway's developer API (docs/channels.md#protocol-runway; https://docs.dev.runwayml.com/api/,
 * https://docs.dev.runwayml.com/errors/task-failures/; runwayml/sdk-node: sdk-node/src/client.ts,
 * sdk-node/src/resources/image-to-video.ts, sdk-node/src/resources/text-to-video.ts, sdk-node/src/resources/tasks.ts,
 * sdk-node/src/core/error.ts).
 *
 * - Auth: `Authorization: Bearer <key>` and `X-Runway-Version: 2024-11-06` on every call (the
 *   SDK's `runwayVersion` default, sdk-node/src/client.ts).
 * - Submit: `POST /v1/image_to_video` when a first frame is given (`promptImage` as
 *   `[{uri, position: "first"}, {uri, position: "last"}]`), else `POST /v1/text_to_video`;
 *   -> `{id}`, the upstream id.
 * - Poll: `GET /v1/tasks/{id}` -> `status` PENDING | THROTTLED (queued, waiting for the account's
 *   concurrency) | RUNNING (`progress` 0..1) | SUCCEEDED (`output[]`, URLs that expire: copied at
 *   once) | FAILED (`failure`, `failureCode`) | CANCELLED.
 * - Moderation: a `failureCode` starting `SAFETY.` (SAFETY.INPUT.*, SAFETY.OUTPUT.*) is
 *   content_policy_violation ("You should not retry these generations"); the human `failure`
 *   text is not shown as is ("We do not recommend returning this to users", tasks.ts).
 * - Cancel: `DELETE /v1/tasks/{id}` cancels a PENDING, THROTTLED or RUNNING task (tasks.ts `delete`).
 * - Errors (sdk-node/src/core/error.ts, https://docs.dev.runwayml.com/errors/errors/): 400 `{error}` is the
 *   request's fault; 401/403 the key's; 429 the rate or daily limit, waited out; 5xx Runway's.
 * - No reconcile: the SDK sends no idempotency key (its `idempotencyHeader` is unset) and the API
 *   lists no tasks, so a lost submit answer fails `upstream_submission_unknown`.
 */
import {
  asArray,
  asNumber,
  asString,
  clip,
  mediaRejection,
  pick,
  policyViolation,
  pollByHttpClass,
  problemRejection,
  specOf,
  submitByHttpClass,
  unknownWord,
  upstreamError,
  upstreamProgress,
  validUpstreamId,
} from '../adapter-kit.js';
import { failure } from '../failure.js';
import { checkProfile } from '../profiles.js';
import {
  MediaInputError,
  type CancelOutcome,
  type ChannelContext,
  type ChannelJob,
  type ParamMapping,
  type PollOutcome,
  type ProtocolAdapter,
  type SubmitOutcome,
  type TargetSpec,
} from '../protocol.js';
import { runwayRatio } from '../profiles-runway.js';
import { urlOrInline } from './media-values.js';
import { NO_PROMPT_FIELDS, NO_REFERENCE_AV, oneMp4PerTask } from './video-rows.js';

export const RUNWAY_VERSION = '2024-11-06';
const TASK_ID = /^[A-Za-z0-9-]{1,128}$/;
const POLICY_WORDS = /moderat|safety|policy|prohibited|inappropriate|public figure/i;

export const runwayParamMapping: readonly ParamMapping[] = [
  { param: 'prompt', upstream: 'promptText', handling: 'mapped', note: 'at most 1000 characters (checked upstream)' },
  {
    param: 'image',
    upstream: 'promptImage[{position: first}] (image_to_video)',
    handling: 'mapped',
    note: 'https URL as given; a data URL published, else inline',
  },
  { param: 'end_image', upstream: 'promptImage[{position: last}]', handling: 'mapped', note: 'veo3.1 only' },
  {
    param: 'aspect_ratio',
    upstream: 'ratio',
    handling: 'mapped',
    note: 'with resolution: 16:9 720p -> 1280:720, 9:16 1080p -> 1080:1920 ...; adaptive -> 1280:720',
  },
  { param: 'resolution', upstream: 'ratio', handling: 'mapped', note: '720p; veo3.1 also 1080p' },
  { param: 'duration', upstream: 'duration', handling: 'mapped', note: 'gen4.5 2-10, gen4_turbo 5 or 10, veo3.1 4, 6 or 8' },
  { param: 'seed', upstream: 'seed', handling: 'mapped', note: 'gen4.5 and gen4_turbo, 0..4294967295; -1 is not sent' },
  { param: 'audio_enable', upstream: 'audio', handling: 'mapped', note: 'veo3.1 only' },
  { param: 'images', upstream: '', handling: 'refused', note: 'these models take frames, not reference images' },
  ...NO_REFERENCE_AV,
  ...NO_PROMPT_FIELDS,
  ...oneMp4PerTask('Runway'),
];

const headers = (ctx: ChannelContext): Record<string, string> => ({ authorization: `Bearer ${ctx.apiKey}`, 'x-runway-version': RUNWAY_VERSION });

function check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  if (kind !== 'video') return { param: 'model', message: `'model' cannot be sent through channel ${target.channel}: the runway protocol makes videos only` };
  return checkProfile(target.profile, kind, params, `Runway model ${target.upstreamModel}`);
}

async function body(ctx: ChannelContext, job: ChannelJob): Promise<Record<string, unknown>> {
  const p = job.params;
  const out: Record<string, unknown> = { model: ctx.upstreamModel };
  if (typeof p['prompt'] === 'string' && p['prompt'] !== '') out['promptText'] = p['prompt'];
  out['ratio'] = runwayRatio(ctx.upstreamModel, p['aspect_ratio'], p['resolution']);
  if (typeof p['duration'] === 'number') out['duration'] = p['duration'];
  if (typeof p['seed'] === 'number' && p['seed'] >= 0) out['seed'] = p['seed'];
  if (typeof p['audio_enable'] === 'boolean' && ctx.upstreamModel.startsWith('veo')) out['audio'] = p['audio_enable'];
  if (p['image'] !== undefined) {
    const frames: Record<string, unknown>[] = [{ uri: await urlOrInline(ctx, p['image'], 'image'), position: 'first' }];
    if (p['end_image'] !== undefined) frames.push({ uri: await urlOrInline(ctx, p['end_image'], 'end_image'), position: 'last' });
    out['promptImage'] = frames;
  }
  return out;
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  let json: Record<string, unknown>;
  try {
    json = await body(ctx, job);
  } catch (err) {
    if (err instanceof MediaInputError) return mediaRejection(err.param, err.message);
    throw err;
  }
  const path = json['promptImage'] === undefined ? '/v1/text_to_video' : '/v1/image_to_video';
  const answer = await ctx.http.request({ method: 'POST', path, headers: headers(ctx), json });
  const byClass = submitByHttpClass(answer, (status) => {
    const message = answer.kind === 'response' ? (asString(pick(answer.json, 'error')) ?? '') : '';
    const text = `Runway ${status}: ${message || 'request refused'}`;
    return POLICY_WORDS.test(message) ? policyViolation(text) : failure('invalid_parameter', clip(text), '');
  });
  if (byClass) return byClass;
  const id = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'id'));
  if (id === undefined || !TASK_ID.test(id)) return { outcome: 'unknown', reason: 'Runway answered 2xx without a task id' };
  return { outcome: 'accepted', upstreamId: id };
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  if (!TASK_ID.test(upstreamId)) return { state: 'not_found', upstreamWord: 'malformed task id' };
  const answer = await ctx.http.request({ method: 'GET', path: `/v1/tasks/${upstreamId}`, headers: headers(ctx) });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const task = answer.json;
  const word = asString(pick(task, 'status')) ?? '';
  switch (word) {
    case 'PENDING':
    case 'THROTTLED':
      return { state: 'queued', upstreamWord: word };
    case 'RUNNING': {
      const raw = asNumber(pick(task, 'progress'));
      const progress = upstreamProgress(raw !== undefined && raw <= 1 ? raw * 100 : raw);
      return progress === undefined ? { state: 'running', upstreamWord: word } : { state: 'running', progress, upstreamWord: word };
    }
    case 'SUCCEEDED': {
      const urls = asArray(pick(task, 'output')).filter((url): url is string => typeof url === 'string' && url !== '');
      if (urls.length === 0)
        return {
          state: 'failed',
          error: failure('output_invalid', `Runway task ${upstreamId} succeeded without an output`, '', upstreamId),
          upstreamWord: word,
        };
      return { state: 'succeeded', outputs: urls.map((url) => ({ type: 'video' as const, url })), upstreamWord: word, reportedUsage: { videos: urls.length } };
    }
    case 'FAILED': {
      const code = asString(pick(task, 'failureCode')) ?? '';
      if (code.startsWith('SAFETY'))
        return { state: 'failed', error: policyViolation(`Runway content moderation refused the task (${code})`, upstreamId), upstreamWord: `${word} ${code}` };
      return {
        state: 'failed',
        error: upstreamError(`Runway task failed${code === '' ? '' : ` (${code})`}: ${asString(pick(task, 'failure')) ?? 'no reason given'}`, upstreamId),
        upstreamWord: `${word} ${code}`.trim(),
      };
    }
    case 'CANCELLED':
      return { state: 'failed', error: upstreamError('Runway task was cancelled or deleted upstream', upstreamId), upstreamWord: word };
    default:
      return unknownWord(ctx, word);
  }
}

async function cancel(ctx: ChannelContext, upstreamId: string): Promise<CancelOutcome> {
  if (!TASK_ID.test(upstreamId)) return { outcome: 'not_cancellable', reason: 'malformed task id' };
  const answer = await ctx.http.request({ method: 'DELETE', path: `/v1/tasks/${upstreamId}`, headers: headers(ctx) });
  if (answer.kind !== 'response') return { outcome: 'transient', reason: `${answer.kind}: ${answer.reason}` };
  if (answer.status >= 200 && answer.status <= 299) return { outcome: 'cancelled' };
  if (answer.status === 404) return { outcome: 'not_cancellable', reason: 'HTTP 404: the task is gone' };
  if (answer.status === 429 || answer.status >= 500) return { outcome: 'transient', reason: `HTTP ${answer.status}` };
  return { outcome: 'not_cancellable', reason: `HTTP ${answer.status}` };
}

export const runwayAdapter: ProtocolAdapter = {
  protocol: 'runway',
  paramMapping: runwayParamMapping,
  check,
  submit,
  poll,
  cancel,
  async probe(ctx) {
    // The organization: cheap, authenticated, creates nothing (runwayml/sdk-node sdk-node/src/resources/organization.ts `retrieve`).
    const answer = await ctx.http.request({ method: 'GET', path: '/v1/organization', headers: headers(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 200) return { ok: true, detail: `organization, ${asNumber(pick(answer.json, 'creditBalance')) ?? '?'} credits` };
    return { ok: false, reason: `HTTP ${answer.status}` };
  },
};
