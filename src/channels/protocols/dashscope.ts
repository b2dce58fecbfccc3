/**
 * `dashscope`: Alibaba Cloud Model Studio async tasks (docs/channels.md#protocol-dashscope; provider references
 * https://www.alibabacloud.com/help/en/model-studio/image-to-video-general-api-reference,
 * .../text-to-video-api-reference, .../wan-image-generation-api-reference,
 * .../manage-asynchronous-tasks; error codes: .../developer-reference/error-code).
 * Video: the Wan 2.7 / 3.0 `input.media[]` request on the video-synthesis endpoint. Images: the
 * async image-generation endpoint (`input.messages`, wan2.6-t2i style; z-image-turbo is sync-only
 * and cannot be a target). Both need `X-DashScope-Async: enable`; both are read through the task
 * API, whose statuses are PENDING, RUNNING, (SUSPENDED), SUCCEEDED, FAILED, CANCELED, UNKNOWN.
 *
 * Traps: the failure reason is in `output.code/message`, not at the top; UNKNOWN comes
 * back as HTTP 200 (mapped to `not_found`); the result is in `video_url`, `results[].url` or
 * `choices[].message.content[].image`. No idempotency and no client reference: a lost submission
 * cannot be found again, so there is no reconcile.
 */
import {
  cannotSend,
  asArray,
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
import type { UpstreamFailure } from '../failure.js';
import {
  MediaInputError,
  type ChannelContext,
  type ChannelJob,
  type HttpOutcome,
  type ParamMapping,
  type PollOutcome,
  type ProtocolAdapter,
  type ReportedUsage,
  type SubmitOutcome,
  type TargetSpec,
} from '../protocol.js';
import { checkProfile, type ParamProblem } from '../profiles.js';
import { stringList, urlOrInline } from './media-values.js';

export const DASHSCOPE_PATHS = {
  video: '/api/v1/services/aigc/video-generation/video-synthesis',
  image: '/api/v1/services/aigc/image-generation/generation',
  task: (id: string) => `/api/v1/tasks/${encodeURIComponent(id)}`,
  cancel: (id: string) => `/api/v1/tasks/${encodeURIComponent(id)}/cancel`,
} as const;

/**
 * Moderation results: `DataInspectionFailed` (input or output blocked), `IPInfringementSuspect`
 * (suspected intellectual-property infringement), and the Sensitive/Moderation families. Not
 * `InvalidParameter.DataInspection`: despite its name, that one says the upstream could not
 * download an input (a bad or unreachable URL), which is the request's fault, not a refusal of
 * its content.
 */
const POLICY_CODES = /^(DataInspectionFailed|IPInfringementSuspect|[\w.]*Sensitive[\w.]*|[\w.]*Moderation[\w.]*|Audit[\w.]*)$/i;
/** Codes that say the channel (account, quota, key) cannot take work now: fail over. */
const CHANNEL_CODES = /^(Arrearage|Throttling.*|InvalidApiKey|AccessDenied.*|Unauthorized|QuotaExhausted|AllocationQuota.*)$/i;

function headers(ctx: ChannelContext, async: boolean): Record<string, string> {
  return { authorization: `Bearer ${ctx.apiKey}`, ...(async ? { 'x-dashscope-async': 'enable' } : {}) };
}

/** Wan 3.0 removed negative_prompt and prompt_extend (their API reference lists neither). */
function isWan3(upstreamModel: string): boolean {
  return /^wan3/i.test(upstreamModel);
}

/**
 * The Wan 2.7 references list no `parameters.audio`: there is no switch. The output always has
 * sound (the driving audio, or a soundtrack the model makes when none is given), so
 * `audio_enable: true` is what it does anyway (accepted, not sent) and `false` cannot be honoured.
 */
function isWan27(upstreamModel: string): boolean {
  return /^wan2\.7/i.test(upstreamModel);
}

/** What DashScope cannot express, without I/O (create time and submit). */
function check(target: TargetSpec, kind: ChannelJob['kind'], p: ChannelJob['params']): ParamProblem | undefined {
  const no = (param: string, why: string): ParamProblem => cannotSend(target, param, why);
  if (kind === 'video') {
    if (isWan3(target.upstreamModel) && p['negative_prompt'] !== undefined) return no('negative_prompt', 'Wan 3.0 has no negative prompt');
    if (isWan3(target.upstreamModel) && p['prompt_extend'] === true) return no('prompt_extend', 'Wan 3.0 has no prompt extension');
    if (isWan27(target.upstreamModel) && p['audio_enable'] === false)
      return no('audio_enable', 'Wan 2.7 has no audio switch (no parameters.audio): its output always has sound');
  }
  return checkProfile(target.profile, kind, p, `DashScope model ${target.upstreamModel}`);
}

export async function dashscopeVideoBody(ctx: ChannelContext, job: ChannelJob): Promise<Record<string, unknown> | SubmitOutcome> {
  const p = job.params;
  const wan3 = isWan3(ctx.upstreamModel);
  const media: { type: string; url: string }[] = [];
  if (p['image'] !== undefined) media.push({ type: 'first_frame', url: await urlOrInline(ctx, p['image'], 'image') });
  if (p['end_image'] !== undefined) media.push({ type: 'last_frame', url: await urlOrInline(ctx, p['end_image'], 'end_image') });
  for (const [param, type] of [
    ['images', 'reference_image'],
    ['videos', 'reference_video'],
    ['audios', 'reference_audio'],
  ] as const) {
    const list = stringList(p[param]);
    for (let i = 0; i < list.length; i += 1) media.push({ type, url: await urlOrInline(ctx, list[i], `${param}[${i}]`) });
  }
  if (p['audio'] !== undefined) media.push({ type: 'driving_audio', url: await urlOrInline(ctx, p['audio'], 'audio') });

  const input: Record<string, unknown> = { prompt: p['prompt'] };
  if (media.length > 0) input['media'] = media;
  if (p['negative_prompt'] !== undefined) input['negative_prompt'] = p['negative_prompt'];
  const parameters: Record<string, unknown> = { watermark: false };
  if (typeof p['resolution'] === 'string') parameters['resolution'] = p['resolution'].toUpperCase();
  if (p['duration'] !== undefined) parameters['duration'] = p['duration'];
  // `adaptive` is the upstream's own behaviour when no ratio is sent: the input image decides.
  if (typeof p['aspect_ratio'] === 'string' && p['aspect_ratio'] !== 'adaptive') parameters['ratio'] = p['aspect_ratio'];
  if (typeof p['seed'] === 'number' && p['seed'] >= 0) parameters['seed'] = p['seed'];
  if (typeof p['prompt_extend'] === 'boolean' && !wan3) parameters['prompt_extend'] = p['prompt_extend'];
  if (typeof p['audio_enable'] === 'boolean' && !isWan27(ctx.upstreamModel)) parameters['audio'] = p['audio_enable'];
  return { model: ctx.upstreamModel, input, parameters };
}

export function dashscopeImageBody(ctx: ChannelContext, job: ChannelJob): Record<string, unknown> {
  const p = job.params;
  const parameters: Record<string, unknown> = { n: 1, watermark: false, size: `${String(p['width'])}*${String(p['height'])}` };
  if (typeof p['prompt_extend'] === 'boolean') parameters['prompt_extend'] = p['prompt_extend'];
  if (typeof p['seed'] === 'number') parameters['seed'] = p['seed'];
  return { model: ctx.upstreamModel, input: { messages: [{ role: 'user', content: [{ text: p['prompt'] }] }] }, parameters };
}

function errorBody(answer: HttpOutcome): { code: string; message: string; requestId: string | undefined } {
  const json = answer.kind === 'response' ? answer.json : undefined;
  return {
    code: asString(pick(json, 'code')) ?? '',
    message: asString(pick(json, 'message')) ?? (answer.kind === 'response' ? `HTTP ${answer.status}` : answer.reason),
    requestId: asString(pick(json, 'request_id')),
  };
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
    body = job.kind === 'video' ? await dashscopeVideoBody(ctx, job) : dashscopeImageBody(ctx, job);
  } catch (err) {
    if (err instanceof MediaInputError) return mediaRejection(err.param, err.message);
    throw err;
  }
  if ('outcome' in body) return body as SubmitOutcome;
  const answer = await ctx.http.request({
    method: 'POST',
    path: job.kind === 'video' ? DASHSCOPE_PATHS.video : DASHSCOPE_PATHS.image,
    headers: headers(ctx, true),
    json: body,
  });
  const err = errorBody(answer);
  if (answer.kind === 'response' && answer.status >= 400 && answer.status < 500 && CHANNEL_CODES.test(err.code)) {
    return {
      outcome: 'refused',
      reason: `HTTP ${answer.status} ${err.code}`,
      ...(answer.retryAfterMs === undefined ? {} : { retryAfterMs: answer.retryAfterMs }),
    };
  }
  const early = submitByHttpClass(answer, () => failureFor(err.code, err.message, err.requestId), err.requestId);
  if (early !== undefined) return early;
  const json = answer.kind === 'response' ? answer.json : undefined;
  const id = validUpstreamId(pick(json, 'output.task_id'));
  if (id !== undefined) return { outcome: 'accepted', upstreamId: id, ...(err.requestId === undefined ? {} : { requestId: err.requestId }) };
  // A business error inside HTTP 200: an explicit refusal, so nothing was created.
  if (err.code !== '') {
    if (CHANNEL_CODES.test(err.code)) return { outcome: 'refused', reason: `HTTP 200 ${err.code}` };
    return { outcome: 'rejected', error: failureFor(err.code, err.message, err.requestId) };
  }
  return { outcome: 'unknown', reason: 'HTTP 200 without output.task_id' };
}

function outputsOf(output: unknown): { type: 'video' | 'image'; url: string }[] {
  const video = asString(pick(output, 'video_url'));
  if (video !== undefined) return [{ type: 'video', url: video }];
  const images: string[] = [];
  for (const result of asArray(pick(output, 'results'))) {
    const url = asString(pick(result, 'url'));
    if (url !== undefined) images.push(url);
  }
  for (const choice of asArray(pick(output, 'choices'))) {
    for (const part of asArray(pick(choice, 'message.content'))) {
      const url = asString(pick(part, 'image'));
      if (url !== undefined) images.push(url);
    }
  }
  return images.map((url) => ({ type: 'image', url }));
}

/** `usage` of a finished task: `video_duration` (older answers: `duration`), `video_count`, `image_count`. */
function usageOf(usage: unknown): ReportedUsage | undefined {
  const seconds = positive(pick(usage, 'video_duration')) ?? positive(pick(usage, 'duration'));
  const videos = positive(pick(usage, 'video_count'));
  const images = positive(pick(usage, 'image_count'));
  const out = {
    ...(seconds === undefined ? {} : { seconds }),
    ...(videos === undefined ? {} : { videos }),
    ...(images === undefined ? {} : { images }),
  };
  return Object.keys(out).length === 0 ? undefined : out;
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const answer = await ctx.http.request({ method: 'GET', path: DASHSCOPE_PATHS.task(upstreamId), headers: headers(ctx, false) });
  const early = pollByHttpClass(answer);
  if (early !== undefined) return early;
  const json = answer.kind === 'response' ? answer.json : undefined;
  const output = pick(json, 'output');
  const status = asString(pick(output, 'task_status'));
  const requestId = asString(pick(json, 'request_id'));
  if (status === undefined) {
    const err = errorBody(answer);
    return { state: 'transient', reason: err.code === '' ? 'answer without output.task_status' : `business error ${clip(err.code, 64)}` };
  }
  switch (status) {
    case 'PENDING':
      return { state: 'queued', upstreamWord: status };
    case 'RUNNING':
    case 'SUSPENDED':
      return { state: 'running', upstreamWord: status };
    case 'SUCCEEDED': {
      const usage = usageOf(pick(json, 'usage'));
      return usage === undefined
        ? { state: 'succeeded', outputs: outputsOf(output), upstreamWord: status }
        : { state: 'succeeded', outputs: outputsOf(output), upstreamWord: status, reportedUsage: usage };
    }
    case 'FAILED':
      return {
        state: 'failed',
        error: failureFor(asString(pick(output, 'code')) ?? '', asString(pick(output, 'message')) ?? 'the task failed upstream', requestId),
        upstreamWord: status,
      };
    case 'CANCELED':
      return { state: 'failed', error: upstreamError('the upstream task was cancelled', requestId), upstreamWord: status };
    case 'UNKNOWN':
      return { state: 'not_found', upstreamWord: status };
    default:
      return unknownWord(ctx, status);
  }
}

export const dashscopeAdapter: ProtocolAdapter = {
  protocol: 'dashscope',
  paramMapping: [
    { param: 'prompt', upstream: 'input.prompt (images: input.messages[0].content[0].text)', handling: 'mapped' },
    { param: 'image', upstream: 'input.media[{type:first_frame}]', handling: 'mapped' },
    { param: 'end_image', upstream: 'input.media[{type:last_frame}]', handling: 'mapped' },
    { param: 'images', upstream: 'input.media[{type:reference_image}]', handling: 'mapped' },
    { param: 'videos', upstream: 'input.media[{type:reference_video}]', handling: 'mapped' },
    { param: 'audios', upstream: 'input.media[{type:reference_audio}]', handling: 'mapped' },
    { param: 'audio', upstream: 'input.media[{type:driving_audio}]', handling: 'mapped' },
    {
      param: 'negative_prompt',
      upstream: 'input.negative_prompt',
      handling: 'mapped',
      note: 'Refused (unsupported_value) when the upstream model is Wan 3.x, which removed it.',
    },
    {
      param: 'prompt_extend',
      upstream: 'parameters.prompt_extend',
      handling: 'mapped',
      note: 'Wan 3.x: true is refused (unsupported_value), false is not sent (3.x never extends).',
    },
    { param: 'duration', upstream: 'parameters.duration', handling: 'mapped' },
    { param: 'resolution', upstream: 'parameters.resolution', handling: 'mapped', note: 'Upper-cased: 720p -> 720P.' },
    { param: 'aspect_ratio', upstream: 'parameters.ratio', handling: 'mapped', note: 'adaptive is not sent: the upstream then follows the input image.' },
    { param: 'seed', upstream: 'parameters.seed', handling: 'mapped', note: '-1 (random) is not sent.' },
    {
      param: 'audio_enable',
      upstream: 'parameters.audio',
      handling: 'mapped',
      note: 'Wan 2.7 has no such switch and always adds sound: true is accepted and not sent, false is refused (unsupported_value).',
    },
    {
      param: 'width, height (size)',
      upstream: 'parameters.size "W*H"',
      handling: 'mapped',
      note: 'wan2.6-t2i: 1280*1280 to 1440*1440 pixels in total, ratio 1:4 to 4:1, else refused (unsupported_value on size, or width).',
    },
    { param: 'extra', upstream: '', handling: 'ignored', note: 'Only the PixVerse reference model accepts extra; it is not routed to dashscope.' },
  ] satisfies readonly ParamMapping[],
  check,
  submit,
  poll,
  async cancel(ctx, upstreamId) {
    const answer = await ctx.http.request({ method: 'POST', path: DASHSCOPE_PATHS.cancel(upstreamId), headers: headers(ctx, false) });
    if (answer.kind !== 'response') return { outcome: 'transient', reason: answer.reason };
    const { code, requestId } = errorBody(answer);
    const withId = requestId === undefined ? {} : { requestId };
    if (answer.status === 200) return { outcome: 'cancelled', ...withId };
    if (answer.status >= 400 && answer.status < 500 && answer.status !== 429)
      return { outcome: 'not_cancellable', reason: `HTTP ${answer.status} ${code}`, ...withId };
    return { outcome: 'transient', reason: `HTTP ${answer.status}`, ...withId };
  },
  async probe(ctx) {
    // Querying an id that cannot exist costs nothing and proves the key: 200 UNKNOWN, or 401.
    const answer = await ctx.http.request({ method: 'GET', path: DASHSCOPE_PATHS.task('mediagate-probe'), headers: headers(ctx, false) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    return answer.status === 200 ? { ok: true, detail: 'task API answers' } : { ok: false, reason: `HTTP ${answer.status} ${errorBody(answer).code}` };
  },
};
