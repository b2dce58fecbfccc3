/**
 * `xai`: Grok Imagine video through xAI's API (docs/channels.md#protocol-xai;
 * https://docs.x.ai/docs/guides/video-generation, https://docs.x.ai/docs/api-reference; xAI's own
 * SDK https://github.com/xai-org/xai-sdk-python: xai-sdk-python/src/xai_sdk/proto/v6/video_pb2.pyi
 * (`GenerateVideoRequest` fields and enums, `VideoResponse` {video, model, usage, error {code,
 * message}, progress}, `GeneratedVideo` {url, duration, respect_moderation}),
 * xai-sdk-python/src/xai_sdk/proto/v6/deferred_pb2.pyi (`DeferredStatus` PENDING | DONE | EXPIRED |
 * FAILED), xai-sdk-python/src/xai_sdk/video.py (no URL when `respect_moderation` is false)). The
 * SDK speaks gRPC: the REST spellings that no official page we could read shows (`image: {url}`,
 * HTTP 202 while pending) follow the REST reference as third parties quote it
 * (docs/channels.md#what-was-checked-against-official-sources).
 *
 * - Auth: `Authorization: Bearer <key>`.
 * - Submit: `POST /v1/videos/generations` `{model, prompt, duration, aspect_ratio, resolution,
 *   image: {url}}` (image to video when `image` is given; a URL or a data URI) -> `{request_id}`,
 *   the upstream id.
 * - Poll: `GET /v1/videos/{request_id}`. While the video is pending the answer is HTTP 202,
 *   sometimes without a body, or `status: "pending"`: running. `done` with `video.url` succeeded,
 *   unless `video.respect_moderation` is false (the video was withheld by moderation:
 *   content_policy_violation); `failed` and `expired` failed. A done answer's `video.duration`
 *   and `usage.cost_in_usd_ticks` (the SDK's `SamplingUsage`) are the reported usage.
 * - Errors: 400 is the request's fault (moderation words make it content_policy_violation);
 *   401/403, 429 and 5xx are refused (fail over or wait).
 * - No cancel and no reconcile: the API documents neither a cancel nor a client reference, so a
 *   lost submit answer fails `upstream_submission_unknown`.
 */
import {
  asNumber,
  asString,
  clip,
  mediaRejection,
  pick,
  policyViolation,
  positive,
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
  type ChannelContext,
  type ChannelJob,
  type ParamMapping,
  type PollOutcome,
  type ProtocolAdapter,
  type SubmitOutcome,
  type TargetSpec,
} from '../protocol.js';
import { urlOrInline } from './media-values.js';
import { NO_PROMPT_FIELDS, NO_REFERENCE_AV, oneMp4PerTask } from './video-rows.js';

const ID = /^[A-Za-z0-9-]{1,128}$/;
const POLICY_WORDS = /moderat|safety|policy|prohibited|inappropriate|violat/i;

export const xaiParamMapping: readonly ParamMapping[] = [
  { param: 'prompt', upstream: 'prompt', handling: 'mapped' },
  { param: 'image', upstream: 'image.url', handling: 'mapped', note: 'https URL as given; a data URL published, else sent as a data URI' },
  { param: 'duration', upstream: 'duration', handling: 'mapped', note: '1 to 15 s' },
  { param: 'resolution', upstream: 'resolution', handling: 'mapped', note: '480p, 720p or 1080p' },
  { param: 'aspect_ratio', upstream: 'aspect_ratio', handling: 'mapped', note: '16:9, 9:16, 1:1, 4:3, 3:4, 3:2, 2:3; adaptive is not sent' },
  { param: 'end_image', upstream: '', handling: 'refused', note: 'no last frame upstream' },
  { param: 'images', upstream: '', handling: 'refused' },
  ...NO_REFERENCE_AV,
  { param: 'audio_enable', upstream: '', handling: 'refused', note: 'Grok Imagine video comes with sound, no switch; true is accepted' },
  { param: 'seed', upstream: '', handling: 'refused', note: 'no seed upstream; -1 is accepted' },
  ...NO_PROMPT_FIELDS,
  ...oneMp4PerTask('Grok Imagine'),
];

const auth = (ctx: ChannelContext): Record<string, string> => ({ authorization: `Bearer ${ctx.apiKey}` });

function check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  if (kind !== 'video') return { param: 'model', message: `'model' cannot be sent through channel ${target.channel}: the xai protocol makes videos only` };
  return checkProfile(target.profile, kind, params, `xAI model ${target.upstreamModel}`);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const p = job.params;
  const json: Record<string, unknown> = { model: ctx.upstreamModel };
  if (typeof p['prompt'] === 'string' && p['prompt'] !== '') json['prompt'] = p['prompt'];
  if (typeof p['duration'] === 'number') json['duration'] = p['duration'];
  if (typeof p['resolution'] === 'string') json['resolution'] = p['resolution'];
  if (typeof p['aspect_ratio'] === 'string' && p['aspect_ratio'] !== 'adaptive') json['aspect_ratio'] = p['aspect_ratio'];
  try {
    if (p['image'] !== undefined) json['image'] = { url: await urlOrInline(ctx, p['image'], 'image') };
  } catch (err) {
    if (err instanceof MediaInputError) return mediaRejection(err.param, err.message);
    throw err;
  }
  const answer = await ctx.http.request({ method: 'POST', path: '/v1/videos/generations', headers: auth(ctx), json });
  const byClass = submitByHttpClass(answer, (status) => {
    const message = answer.kind === 'response' ? (asString(pick(answer.json, 'error')) ?? asString(pick(answer.json, 'error.message')) ?? '') : '';
    const text = `xAI ${status}: ${message || 'request refused'}`;
    return POLICY_WORDS.test(message) ? policyViolation(text) : failure('invalid_parameter', clip(text), '');
  });
  if (byClass) return byClass;
  const id = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'request_id'));
  if (id === undefined || !ID.test(id)) return { outcome: 'unknown', reason: 'xAI answered 2xx without a request_id' };
  return { outcome: 'accepted', upstreamId: id };
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  if (!ID.test(upstreamId)) return { state: 'not_found', upstreamWord: 'malformed request id' };
  const answer = await ctx.http.request({ method: 'GET', path: `/v1/videos/${upstreamId}`, headers: auth(ctx) });
  if (answer.kind !== 'response') return { state: 'transient', reason: `${answer.kind}: ${answer.reason}` };
  if (answer.status === 429) return answer.retryAfterMs === undefined ? { state: 'throttled' } : { state: 'throttled', retryAfterMs: answer.retryAfterMs };
  if (answer.status === 404) return { state: 'not_found', upstreamWord: 'HTTP 404' };
  if (answer.status < 200 || answer.status > 299) return { state: 'transient', reason: `HTTP ${answer.status}` };
  const word = asString(pick(answer.json, 'status')) ?? (answer.status === 202 ? 'pending' : '');
  const progress = upstreamProgress(pick(answer.json, 'progress'));
  switch (word) {
    case 'pending':
      return progress === undefined ? { state: 'running', upstreamWord: word } : { state: 'running', progress, upstreamWord: word };
    case 'done': {
      if (pick(answer.json, 'video.respect_moderation') === false)
        return { state: 'failed', error: policyViolation('xAI withheld the video: it did not pass moderation', upstreamId), upstreamWord: 'done: moderated' };
      const url = asString(pick(answer.json, 'video.url'));
      if (url === undefined || url === '')
        return { state: 'failed', error: failure('output_invalid', `xAI request ${upstreamId} is done without a video`, '', upstreamId), upstreamWord: word };
      const seconds = positive(asNumber(pick(answer.json, 'video.duration')));
      // What xAI charged, in its own unit (1 USD = 10^10 ticks), kept as reported for the
      // operator's reconciliation.
      const ticks = asNumber(pick(answer.json, 'usage.cost_in_usd_ticks'));
      const cost = ticks !== undefined && Number.isSafeInteger(ticks) && ticks >= 0 ? { cost_in_usd_ticks: ticks } : {};
      return {
        state: 'succeeded',
        outputs: [{ type: 'video', url }],
        upstreamWord: word,
        reportedUsage: { videos: 1, ...(seconds === undefined ? {} : { seconds }), ...cost },
      };
    }
    case 'failed': {
      const message = asString(pick(answer.json, 'error.message')) ?? 'the generation failed';
      const text = `xAI video generation failed: ${message}`;
      return { state: 'failed', error: POLICY_WORDS.test(message) ? policyViolation(text, upstreamId) : upstreamError(text, upstreamId), upstreamWord: word };
    }
    case 'expired':
      return { state: 'failed', error: upstreamError('xAI video request expired before it finished', upstreamId), upstreamWord: word };
    default:
      return unknownWord(ctx, word);
  }
}

export const xaiAdapter: ProtocolAdapter = {
  protocol: 'xai',
  paramMapping: xaiParamMapping,
  check,
  submit,
  poll,
  async probe(ctx) {
    // The key's own record: cheap, authenticated, creates nothing (https://docs.x.ai/docs/api-reference, "API key").
    const answer = await ctx.http.request({ method: 'GET', path: '/v1/api-key', headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 200) return { ok: true, detail: 'api key' };
    return { ok: false, reason: `HTTP ${answer.status}` };
  },
};
