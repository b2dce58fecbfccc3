/**
 * `ark`: BytePlus ModelArk / Volcengine Ark content generation tasks, Seedance (docs/channels.md#protocol-ark;
 * provider reference https://docs.byteplus.com/en/docs/ModelArk/1520757, errors https://docs.byteplus.com/en/docs/ModelArk/1299023).
 * Seeds are -1 (random) to 4294967295 (the reference: "[-1, 2^32-1]"). Inline Base64 is documented
 * for `image_url` only; the Seedance 2.0 tutorial (https://docs.byteplus.com/docs/ModelArk/2291680)
 * asks for reference videos and audios as public URLs: a data-URL video or audio goes as a signed
 * URL of ours, and is refused when the deployment cannot publish one. Resolutions (480p, 720p,
 * 1080p; no 4k in the reference) are per model, in the built-in profiles.
 * Statuses queued, running, succeeded, failed, cancelled, expired (the reference: a task past
 * `execution_expires_after`, 48 h by default) (plus pending/processing from
 * some gateways). Errors are `{error:{code,message,param,type}}`; output moderation fails the
 * task late, as `failed` with a Sensitive/Risk code. No idempotency and no client reference: a
 * lost submission cannot be found again, so there is no reconcile. Video only.
 */
import {
  cannotSend,
  asString,
  clip,
  mediaRejection,
  positive,
  problemRejection,
  specOf,
  pick,
  pollByHttpClass,
  policyViolation,
  submitByHttpClass,
  unknownWord,
  upstreamError,
  validUpstreamId,
} from '../adapter-kit.js';
import { failure, type UpstreamFailure } from '../failure.js';
import {
  MediaInputError,
  type ChannelContext,
  type ChannelJob,
  type HttpOutcome,
  type ParamMapping,
  type PollOutcome,
  type ProtocolAdapter,
  type SubmitOutcome,
  type TargetSpec,
} from '../protocol.js';
import { checkProfile, type ParamProblem } from '../profiles.js';
import { stringList, urlOnly, urlOrInline } from './media-values.js';

const TASKS = '/api/v3/contents/generations/tasks';
const POLICY_CODES = /(Sensitive|Risk|Moderation|Copyright)/i;

function headers(ctx: ChannelContext): Record<string, string> {
  return { authorization: `Bearer ${ctx.apiKey}` };
}

/** What Ark cannot express, without I/O (create time and submit). */
function check(target: TargetSpec, kind: ChannelJob['kind'], p: ChannelJob['params']): ParamProblem | undefined {
  const no = (param: string, why: string): ParamProblem => cannotSend(target, param, why);
  if (kind !== 'video') return no('model', 'the ark protocol generates video only');
  if (p['negative_prompt'] !== undefined) return no('negative_prompt', 'Seedance has no negative prompt');
  if (p['prompt_extend'] === true) return no('prompt_extend', 'Seedance has no prompt extension');
  const seed = p['seed'];
  if (typeof seed === 'number' && (seed < -1 || seed > 4294967295)) return no('seed', 'Ark takes seeds from -1 (random) to 4294967295');
  return checkProfile(target.profile, kind, p, `Ark model ${target.upstreamModel}`);
}

/** Ark documents inline Base64 for images only: video and audio go by URL. */
const ARK_URL_ONLY = ['Ark', 'video and audio'] as const;

export async function arkBody(ctx: ChannelContext, job: ChannelJob): Promise<Record<string, unknown> | SubmitOutcome> {
  const p = job.params;
  const content: Record<string, unknown>[] = [{ type: 'text', text: p['prompt'] }];
  const image = async (value: unknown, param: string, role: string): Promise<void> => {
    content.push({ type: 'image_url', image_url: { url: await urlOrInline(ctx, value, param) }, role });
  };
  if (p['image'] !== undefined) await image(p['image'], 'image', 'first_frame');
  if (p['end_image'] !== undefined) await image(p['end_image'], 'end_image', 'last_frame');
  const images = stringList(p['images']);
  for (let i = 0; i < images.length; i += 1) await image(images[i], `images[${i}]`, 'reference_image');
  const videos = stringList(p['videos']);
  for (let i = 0; i < videos.length; i += 1) {
    content.push({ type: 'video_url', video_url: { url: await urlOnly(ctx, videos[i] ?? '', `videos[${i}]`, ...ARK_URL_ONLY) }, role: 'reference_video' });
  }
  const audios = [
    ...(p['audio'] === undefined ? [] : [['audio', p['audio']] as const]),
    ...stringList(p['audios']).map((a, i) => [`audios[${i}]`, a] as const),
  ];
  for (const [param, value] of audios) {
    content.push({
      type: 'audio_url',
      audio_url: { url: await urlOnly(ctx, typeof value === 'string' ? value : '', param, ...ARK_URL_ONLY) },
      role: 'reference_audio',
    });
  }
  const body: Record<string, unknown> = { model: ctx.upstreamModel, content, watermark: false };
  if (typeof p['resolution'] === 'string') body['resolution'] = p['resolution'].toLowerCase();
  if (typeof p['aspect_ratio'] === 'string') body['ratio'] = p['aspect_ratio'];
  if (p['duration'] !== undefined) body['duration'] = p['duration'];
  if (typeof p['seed'] === 'number') body['seed'] = p['seed'];
  if (typeof p['audio_enable'] === 'boolean') body['generate_audio'] = p['audio_enable'];
  return body;
}

function errorOf(answer: HttpOutcome): { code: string; message: string; requestId: string | undefined } {
  const json = answer.kind === 'response' ? answer.json : undefined;
  const message = asString(pick(json, 'error.message')) ?? (answer.kind === 'response' ? `HTTP ${answer.status}` : answer.reason);
  const requestId = (answer.kind === 'response' ? answer.headers['x-request-id'] : undefined) ?? /Request id: ?([\w-]+)/i.exec(message)?.[1];
  return { code: asString(pick(json, 'error.code')) ?? '', message, requestId };
}

function failureFor(code: string, message: string, requestId: string | undefined): UpstreamFailure {
  const text = code === '' ? message : `${code}: ${message}`;
  return POLICY_CODES.test(code) ? policyViolation(text, requestId) : upstreamError(text, requestId);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  let body: Record<string, unknown> | SubmitOutcome;
  try {
    body = await arkBody(ctx, job);
  } catch (err) {
    if (err instanceof MediaInputError) return mediaRejection(err.param, err.message);
    throw err;
  }
  if ('outcome' in body) return body as SubmitOutcome;
  const answer = await ctx.http.request({ method: 'POST', path: TASKS, headers: headers(ctx), json: body });
  const err = errorOf(answer);
  // 404 on create is the endpoint or model (InvalidEndpoint.NotFound, ModelIDAccessDisabled): the channel's fault.
  if (answer.kind === 'response' && answer.status === 404) return { outcome: 'refused', reason: `HTTP 404 ${err.code}` };
  const early = submitByHttpClass(answer, () => failureFor(err.code, err.message, err.requestId), err.requestId);
  if (early !== undefined) return early;
  const json = answer.kind === 'response' ? answer.json : undefined;
  const id = validUpstreamId(pick(json, 'id'));
  if (id !== undefined) return { outcome: 'accepted', upstreamId: id, ...(err.requestId === undefined ? {} : { requestId: err.requestId }) };
  if (err.code !== '') return { outcome: 'rejected', error: failureFor(err.code, err.message, err.requestId) };
  return { outcome: 'unknown', reason: 'HTTP 200 without an id' };
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const answer = await ctx.http.request({ method: 'GET', path: `${TASKS}/${encodeURIComponent(upstreamId)}`, headers: headers(ctx) });
  const early = pollByHttpClass(answer);
  if (early !== undefined) return early;
  const json = answer.kind === 'response' ? answer.json : undefined;
  const status = asString(pick(json, 'status'));
  const requestId = answer.kind === 'response' ? answer.headers['x-request-id'] : undefined;
  if (status === undefined) return { state: 'transient', reason: 'answer without status' };
  switch (status) {
    case 'queued':
    case 'pending':
      return { state: 'queued', upstreamWord: status };
    case 'running':
    case 'processing':
      return { state: 'running', upstreamWord: status };
    case 'succeeded': {
      const url = asString(pick(json, 'content.video_url'));
      const outputs = url === undefined ? [] : [{ type: 'video' as const, url }];
      const tokens = positive(pick(json, 'usage.completion_tokens')) ?? positive(pick(json, 'usage.total_tokens'));
      return tokens === undefined
        ? { state: 'succeeded', outputs, upstreamWord: status }
        : { state: 'succeeded', outputs, upstreamWord: status, reportedUsage: { tokens, videos: 1 } };
    }
    case 'failed':
      return {
        state: 'failed',
        error: failureFor(asString(pick(json, 'error.code')) ?? '', asString(pick(json, 'error.message')) ?? 'the task failed upstream', requestId),
        upstreamWord: status,
      };
    case 'cancelled':
      return { state: 'failed', error: upstreamError('the upstream task was cancelled', requestId), upstreamWord: status };
    case 'expired':
      return {
        state: 'failed',
        error: failure('upstream_timeout', clip('the upstream task expired before it ran (execution_expires_after)'), '', requestId),
        upstreamWord: status,
      };
    default:
      return unknownWord(ctx, status);
  }
}

export const arkAdapter: ProtocolAdapter = {
  protocol: 'ark',
  paramMapping: [
    { param: 'prompt', upstream: 'content[{type:text}]', handling: 'mapped' },
    { param: 'image', upstream: 'content[{type:image_url, role:first_frame}]', handling: 'mapped' },
    { param: 'end_image', upstream: 'content[{type:image_url, role:last_frame}]', handling: 'mapped' },
    { param: 'images', upstream: 'content[{type:image_url, role:reference_image}]', handling: 'mapped' },
    {
      param: 'videos',
      upstream: 'content[{type:video_url, role:reference_video}]',
      handling: 'mapped',
      note: 'By URL only: a data URL needs a public base URL (Base64 is documented for images only).',
    },
    {
      param: 'audios, audio',
      upstream: 'content[{type:audio_url, role:reference_audio}]',
      handling: 'mapped',
      note: 'By URL only: a data URL needs a public base URL.',
    },
    { param: 'audio_enable', upstream: 'generate_audio', handling: 'mapped' },
    { param: 'duration', upstream: 'duration', handling: 'mapped' },
    { param: 'resolution', upstream: 'resolution', handling: 'mapped', note: 'Lower case.' },
    { param: 'aspect_ratio', upstream: 'ratio', handling: 'mapped', note: 'adaptive included.' },
    { param: 'seed', upstream: 'seed', handling: 'mapped', note: '-1 is the upstream\'s own "random"; above 4294967295 refused (unsupported_value).' },
    { param: 'negative_prompt', upstream: '', handling: 'refused', note: 'Seedance has none: unsupported_value.' },
    { param: 'prompt_extend', upstream: '', handling: 'refused', note: 'true is refused (unsupported_value); false is what Seedance does anyway.' },
    { param: 'extra', upstream: '', handling: 'ignored', note: 'Only the PixVerse reference model accepts extra.' },
    { param: 'width, height (image models)', upstream: '', handling: 'refused', note: 'Video only: an image task is rejected unsupported_value on model.' },
  ] satisfies readonly ParamMapping[],
  check,
  submit,
  poll,
  async cancel(ctx, upstreamId) {
    const answer = await ctx.http.request({ method: 'DELETE', path: `${TASKS}/${encodeURIComponent(upstreamId)}`, headers: headers(ctx) });
    if (answer.kind !== 'response') return { outcome: 'transient', reason: answer.reason };
    if (answer.status === 200) return { outcome: 'cancelled' };
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429)
      return { outcome: 'not_cancellable', reason: `HTTP ${answer.status} ${errorOf(answer).code}` };
    return { outcome: 'transient', reason: `HTTP ${answer.status}` };
  },
  async probe(ctx) {
    const answer = await ctx.http.request({ method: 'GET', path: `${TASKS}?page_num=1&page_size=1`, headers: headers(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    return answer.status === 200 ? { ok: true, detail: 'task list answers' } : { ok: false, reason: `HTTP ${answer.status} ${errorOf(answer).code}` };
  },
};
