/**
 * `luma`: Luma's Dream Machine API (docs/channels.md#protocol-luma; https://docs.lumalabs.ai/docs/video-generation,
 * https://docs.lumalabs.ai/reference; lumalabs/lumaai-node: lumaai-node/src/index.ts (base URL
 * `https://api.lumalabs.ai/dream-machine/v1`, bearer key), lumaai-node/src/resources/generations/generations.ts
 * (`create`, `get`, `delete`, the `Generation` and `GenerationRequest` types), lumaai-node/src/resources/credits.ts).
 *
 * - Auth: `Authorization: Bearer <key>`.
 * - Submit: `POST /dream-machine/v1/generations/video` `{model, prompt, aspect_ratio, duration:
 *   "5s"|"9s", resolution, keyframes: {frame0, frame1: {type: "image", url}}}` -> a Generation
 *   whose `id` is the upstream id. Keyframes are URLs only (no data URIs): a data URL is published
 *   at our public URL, else refused.
 * - Poll: `GET /dream-machine/v1/generations/{id}` -> `state` queued | dreaming | completed
 *   (`assets.video`) | failed (`failure_reason`; moderation words make it content_policy_violation).
 * - Errors: `{detail}`; a 400 whose detail speaks of moderation is content_policy_violation.
 * - No cancel: Luma documents `DELETE /generations/{id}` as deleting a generation, not as
 *   stopping or refunding one, so a cancel of ours is not sent on.
 * - No reconcile: the request carries no client reference, so a lost submit answer fails
 *   `upstream_submission_unknown`.
 */
import {
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
import { urlOnly } from './media-values.js';
import { NO_PROMPT_FIELDS, NO_REFERENCE_AV, oneMp4PerTask } from './video-rows.js';

const API = '/dream-machine/v1';
const ID = /^[A-Za-z0-9-]{1,128}$/;
const POLICY_WORDS = /moderat|safety|policy|prohibited|inappropriate|not allowed|violat/i;

export const lumaParamMapping: readonly ParamMapping[] = [
  { param: 'prompt', upstream: 'prompt', handling: 'mapped' },
  { param: 'image', upstream: 'keyframes.frame0 {type: image, url}', handling: 'mapped', note: 'URL only: a data URL is published at our public URL' },
  { param: 'end_image', upstream: 'keyframes.frame1 {type: image, url}', handling: 'mapped', note: 'URL only' },
  { param: 'duration', upstream: 'duration', handling: 'mapped', note: '5 -> "5s", 9 -> "9s"' },
  { param: 'resolution', upstream: 'resolution', handling: 'mapped', note: '540p, 720p, 1080p or 4k' },
  { param: 'aspect_ratio', upstream: 'aspect_ratio', handling: 'mapped', note: '1:1, 16:9, 9:16, 4:3, 3:4, 21:9, 9:21; adaptive is not sent' },
  { param: 'images', upstream: '', handling: 'refused', note: 'Ray takes keyframes, not reference images' },
  ...NO_REFERENCE_AV,
  { param: 'audio_enable', upstream: '', handling: 'refused', note: 'Ray makes silent video; false is accepted' },
  { param: 'seed', upstream: '', handling: 'refused', note: 'no seed upstream; -1 is accepted' },
  ...NO_PROMPT_FIELDS,
  ...oneMp4PerTask('Ray'),
];

const auth = (ctx: ChannelContext): Record<string, string> => ({ authorization: `Bearer ${ctx.apiKey}` });

function check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  if (kind !== 'video') return { param: 'model', message: `'model' cannot be sent through channel ${target.channel}: the luma protocol makes Ray videos only` };
  return checkProfile(target.profile, kind, params, `Luma model ${target.upstreamModel}`);
}

async function body(ctx: ChannelContext, job: ChannelJob): Promise<Record<string, unknown>> {
  const p = job.params;
  const out: Record<string, unknown> = { model: ctx.upstreamModel, generation_type: 'video' };
  if (typeof p['prompt'] === 'string' && p['prompt'] !== '') out['prompt'] = p['prompt'];
  if (typeof p['duration'] === 'number') out['duration'] = `${p['duration']}s`;
  if (typeof p['resolution'] === 'string') out['resolution'] = p['resolution'];
  if (typeof p['aspect_ratio'] === 'string' && p['aspect_ratio'] !== 'adaptive') out['aspect_ratio'] = p['aspect_ratio'];
  const keyframes: Record<string, unknown> = {};
  for (const [param, frame] of [
    ['image', 'frame0'],
    ['end_image', 'frame1'],
  ] as const) {
    const value = p[param];
    if (value === undefined) continue;
    if (typeof value !== 'string') throw new MediaInputError(param, `'${param}' must be an image URL or data URL`);
    keyframes[frame] = { type: 'image', url: await urlOnly(ctx, value, param, 'Luma', 'keyframe images') };
  }
  if (Object.keys(keyframes).length > 0) out['keyframes'] = keyframes;
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
  const answer = await ctx.http.request({ method: 'POST', path: `${API}/generations/video`, headers: auth(ctx), json });
  const byClass = submitByHttpClass(answer, (status) => {
    const detail = answer.kind === 'response' ? (asString(pick(answer.json, 'detail')) ?? JSON.stringify(pick(answer.json, 'detail') ?? '')) : '';
    const text = `Luma ${status}: ${detail || 'request refused'}`;
    return POLICY_WORDS.test(detail) ? policyViolation(text) : failure('invalid_parameter', clip(text), '');
  });
  if (byClass) return byClass;
  const id = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'id'));
  if (id === undefined || !ID.test(id)) return { outcome: 'unknown', reason: 'Luma answered 2xx without a generation id' };
  return { outcome: 'accepted', upstreamId: id };
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  if (!ID.test(upstreamId)) return { state: 'not_found', upstreamWord: 'malformed generation id' };
  const answer = await ctx.http.request({ method: 'GET', path: `${API}/generations/${upstreamId}`, headers: auth(ctx) });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const word = asString(pick(answer.json, 'state')) ?? '';
  switch (word) {
    case 'queued':
      return { state: 'queued', upstreamWord: word };
    case 'dreaming':
      return { state: 'running', upstreamWord: word };
    case 'completed': {
      const url = asString(pick(answer.json, 'assets.video'));
      if (url === undefined || url === '')
        return {
          state: 'failed',
          error: failure('output_invalid', `Luma generation ${upstreamId} completed without a video`, '', upstreamId),
          upstreamWord: word,
        };
      return { state: 'succeeded', outputs: [{ type: 'video', url }], upstreamWord: word, reportedUsage: { videos: 1 } };
    }
    case 'failed': {
      const reason = asString(pick(answer.json, 'failure_reason')) ?? 'no reason given';
      const text = `Luma generation failed: ${reason}`;
      return { state: 'failed', error: POLICY_WORDS.test(reason) ? policyViolation(text, upstreamId) : upstreamError(text, upstreamId), upstreamWord: word };
    }
    default:
      return unknownWord(ctx, word);
  }
}

export const lumaAdapter: ProtocolAdapter = {
  protocol: 'luma',
  paramMapping: lumaParamMapping,
  check,
  submit,
  poll,
  async probe(ctx) {
    // The credit balance: cheap, authenticated, creates nothing (lumaai-node/src/resources/credits.ts).
    const answer = await ctx.http.request({ method: 'GET', path: `${API}/credits`, headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 200) return { ok: true, detail: 'credits' };
    return { ok: false, reason: `HTTP ${answer.status}` };
  },
};
