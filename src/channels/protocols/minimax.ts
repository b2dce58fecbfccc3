/**
 * MiniMax video generation (docs/channels.md#protocol-minimax; https://platform.minimax.io/docs/api-reference/video-generation-v2-create,
 * .../video-generation-v2-query, .../video-generation). Two APIs with nothing in common but the
 * host and the bearer key, chosen by the upstream model name:
 * - v2 (`MiniMax-H3`, `MiniMax-H3-Max` and any other name): `content[]` with roles, the task id
 *   in the query path, `task.content.url`; statuses queued, running, succeeded, failed and
 *   cancelled (MiniMax's own polling script,
 *   https://github.com/MiniMax-AI/MiniMax-H3/blob/main/scripts/readme/common.sh, knows no other), plus `expired`, which one router lists and MiniMax's
 *   pages do not (docs/channels.md#protocol-minimax). Errors are `{type:"error", error:{type, message, http_code},
 *   request_id}` with any HTTP status: the business code is only at the end of the message,
 *   as in "video description contains sensitive content (1026)", so it is read from there.
 *   Cancel is `DELETE /v2/video_generation/{id}`.
 * - v1 (the Hailuo 02/2.3 and `*-01` names): flat body, `base_resp` business errors inside
 *   HTTP 200, and a second call (`files/retrieve`) to turn `file_id` into a download URL.
 * The upstream id is the task id, prefixed `v1:` for v1 tasks, so a poll never has to guess.
 * Neither API has an idempotency key or a searchable client reference: a lost submission cannot
 * be reconciled (no `reconcile`), and the lifecycle fails it `upstream_submission_unknown`.
 */
import {
  cannotSend,
  asArray,
  asNumber,
  positive,
  problemRejection,
  specOf,
  asRecord,
  asString,
  clip,
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
import { urlOnly } from './media-values.js';

const V1_MODELS = /^(MiniMax-Hailuo-|T2V-01|I2V-01|S2V-01)/i;
const V1_PREFIX = 'v1:';

/** Business codes (v1 `base_resp.status_code`, v2 `error.code`) and what they mean for a submission. */
const RATE_LIMITED = new Set([1002, 1039]);
const CHANNEL_FAULT = new Set([1004, 2049, 1008]);
const POLICY = new Set([1026, 1027]);

export const minimaxParamMapping: readonly ParamMapping[] = [
  { param: 'prompt', upstream: 'v2 content[{type:text}]; v1 prompt', handling: 'mapped', note: 'v2 at most 7000 characters, v1 2000 (the upstream checks).' },
  { param: 'image', upstream: 'v2 content[{type:image_url, role:first_frame}]; v1 first_frame_image', handling: 'mapped', note: 'URL or data URL, as given.' },
  { param: 'end_image', upstream: 'v2 role:last_frame; v1 last_frame_image', handling: 'mapped' },
  {
    param: 'images',
    upstream: 'v2 role:reference_image (at most 9); v1 subject_reference[{type:character}]',
    handling: 'mapped',
    note: 'Frames and references cannot be mixed on v2: the upstream refuses it.',
  },
  {
    param: 'videos',
    upstream: 'v2 content[{type:video_url, role:reference_video}]',
    handling: 'mapped',
    note: 'v2 only; v1 refuses it. A data URL needs a public base URL (ctx.media.publicUrl).',
  },
  {
    param: 'audios',
    upstream: 'v2 content[{type:audio_url, role:reference_audio}]',
    handling: 'mapped',
    note: 'v2 only; needs a reference image or video upstream.',
  },
  {
    param: 'audio',
    upstream: 'v2 content[{type:audio_url, role:reference_audio}]',
    handling: 'mapped',
    note: 'Sent as one more reference audio; v1 refuses it.',
  },
  { param: 'duration', upstream: 'duration', handling: 'mapped', note: 'H3 4-15 s, H3-Max 5-15 s (checked upstream).' },
  { param: 'resolution', upstream: 'resolution', handling: 'mapped', note: 'Upper-cased: 768p -> 768P, 2k -> 2K.' },
  { param: 'aspect_ratio', upstream: 'v2 ratio', handling: 'mapped', note: 'v1 has no ratio: refused there.' },
  { param: 'seed', upstream: '', handling: 'refused', note: 'MiniMax documents no seed: -1 (random) is accepted and not sent; any other value is refused.' },
  {
    param: 'audio_enable',
    upstream: '',
    handling: 'refused',
    note: 'v2 output always has audio: true is accepted and not sent, false is refused. v1 output is silent: true is refused.',
  },
  { param: 'negative_prompt', upstream: '', handling: 'refused', note: 'No such field upstream.' },
  {
    param: 'prompt_extend',
    upstream: 'v1 prompt_optimizer',
    handling: 'mapped',
    note: 'v2 has no optimizer: false is accepted and not sent, true is refused.',
  },
  { param: 'extra', upstream: '', handling: 'refused', note: 'No such field upstream.' },
];

const isV1Model = (model: string): boolean => V1_MODELS.test(model);

function resolutionWord(value: unknown): string | undefined {
  return typeof value === 'string' ? value.toUpperCase() : undefined;
}

/** The business code at the end of a v2 error message: "insufficient balance (1008)" -> 1008. */
export function codeInMessage(message: string): number | undefined {
  const match = /\((\d{3,5})\)\s*$/.exec(message);
  return match?.[1] === undefined ? undefined : Number(match[1]);
}

/**
 * A business error: v1 `base_resp`, v2 `{type:"error", error:{type, message:"... (1026)",
 * http_code}}`. The v2 code is the number the message ends with; an explicit `error.code` is
 * read too (older answers), never `http_code` (an HTTP status, not a business code).
 */
function businessError(json: unknown): { code: number; message: string } | undefined {
  const code = asNumber(pick(json, 'base_resp.status_code'));
  if (code !== undefined && code !== 0) return { code, message: asString(pick(json, 'base_resp.status_msg')) ?? 'error' };
  const error = asRecord(pick(json, 'error'));
  if (error && (pick(json, 'type') === 'error' || asString(error['message']) !== undefined)) {
    const message = asString(error['message']) ?? 'error';
    return { code: asNumber(error['code']) ?? codeInMessage(message) ?? 0, message };
  }
  return undefined;
}

function requestIdOf(answer: HttpOutcome): string | undefined {
  if (answer.kind !== 'response') return undefined;
  return asString(pick(answer.json, 'request_id')) ?? answer.headers['trace-id'] ?? answer.headers['x-request-id'];
}

function classifyRefusal(code: number, message: string, requestId: string | undefined): SubmitOutcome {
  const rid = requestId === undefined ? {} : { requestId };
  const text = `MiniMax ${code}: ${clip(message)}`;
  if (RATE_LIMITED.has(code) || CHANNEL_FAULT.has(code) || code === 1000 || code === 1001 || code === 1024 || code === 1033) {
    return { outcome: 'refused', reason: text, ...rid };
  }
  if (POLICY.has(code) || /sensitive/i.test(message)) return { outcome: 'rejected', error: policyViolation(text, requestId) };
  return { outcome: 'rejected', error: upstreamError(text, requestId) };
}

function failureOf(code: number, message: string, requestId?: string): UpstreamFailure {
  const text = `MiniMax ${code}: ${message}`;
  return POLICY.has(code) || /sensitive/i.test(message) ? policyViolation(text, requestId) : upstreamError(text, requestId);
}

type Built = { ok: true; body: Record<string, unknown> } | { ok: false; outcome: SubmitOutcome };

/** MiniMax takes data URLs for images only: audio and video go by URL. */
const MINIMAX_URL_ONLY = ['MiniMax', 'audio and video'] as const;

/** What MiniMax cannot express, without I/O (create time and submit). */
function check(target: TargetSpec, kind: ChannelJob['kind'], p: ChannelJob['params']): ParamProblem | undefined {
  const v1 = isV1Model(target.upstreamModel);
  const no = (param: string, why: string): ParamProblem => cannotSend(target, param, why);
  if (kind !== 'video') return no('model', 'the MiniMax protocol generates videos only');
  if (p['seed'] !== undefined && p['seed'] !== -1) return no('seed', 'MiniMax has no seed');
  if (typeof p['negative_prompt'] === 'string' && p['negative_prompt'] !== '') return no('negative_prompt', 'MiniMax has no negative prompt');
  if (p['extra'] !== undefined) return no('extra', 'MiniMax has no such options');
  if (v1 && p['audio_enable'] === true) return no('audio_enable', 'MiniMax v1 models generate silent video');
  if (!v1 && p['audio_enable'] === false) return no('audio_enable', 'MiniMax v2 output always has audio');
  if (!v1 && p['prompt_extend'] === true) return no('prompt_extend', 'MiniMax v2 has no prompt optimizer');
  if (v1) {
    for (const name of ['videos', 'audios', 'audio', 'aspect_ratio'] as const) {
      const value = p[name];
      if (value !== undefined && !(Array.isArray(value) && value.length === 0)) return no(name, `MiniMax v1 model ${target.upstreamModel} takes no ${name}`);
    }
  }
  return checkProfile(target.profile, kind, p, `MiniMax model ${target.upstreamModel}`);
}

async function buildV2(ctx: ChannelContext, job: ChannelJob): Promise<Built> {
  const p = job.params;
  const content: Record<string, unknown>[] = [{ type: 'text', text: typeof p['prompt'] === 'string' ? p['prompt'] : '' }];
  const image = (url: unknown, role: string): void => {
    if (typeof url === 'string') content.push({ type: 'image_url', image_url: { url }, role });
  };
  image(p['image'], 'first_frame');
  image(p['end_image'], 'last_frame');
  for (const url of asArray(p['images'])) image(url, 'reference_image');
  const videos = asArray(p['videos']).filter((v): v is string => typeof v === 'string');
  for (const [i, v] of videos.entries())
    content.push({ type: 'video_url', video_url: { url: await urlOnly(ctx, v, `videos[${i}]`, ...MINIMAX_URL_ONLY) }, role: 'reference_video' });
  const audios = asArray(p['audios']).filter((v): v is string => typeof v === 'string');
  for (const [i, a] of audios.entries())
    content.push({ type: 'audio_url', audio_url: { url: await urlOnly(ctx, a, `audios[${i}]`, ...MINIMAX_URL_ONLY) }, role: 'reference_audio' });
  if (typeof p['audio'] === 'string')
    content.push({ type: 'audio_url', audio_url: { url: await urlOnly(ctx, p['audio'], 'audio', ...MINIMAX_URL_ONLY) }, role: 'reference_audio' });
  const body: Record<string, unknown> = { model: ctx.upstreamModel, content };
  if (p['duration'] !== undefined) body['duration'] = p['duration'];
  const resolution = resolutionWord(p['resolution']);
  if (resolution !== undefined) body['resolution'] = resolution;
  if (typeof p['aspect_ratio'] === 'string') body['ratio'] = p['aspect_ratio'];
  return { ok: true, body };
}

function buildV1(ctx: ChannelContext, job: ChannelJob): Built {
  const p = job.params;
  const body: Record<string, unknown> = { model: ctx.upstreamModel, prompt: typeof p['prompt'] === 'string' ? p['prompt'] : '' };
  if (typeof p['image'] === 'string') body['first_frame_image'] = p['image'];
  if (typeof p['end_image'] === 'string') body['last_frame_image'] = p['end_image'];
  const images = asArray(p['images']).filter((v): v is string => typeof v === 'string');
  if (images.length > 0) body['subject_reference'] = [{ type: 'character', image: images }];
  if (p['duration'] !== undefined) body['duration'] = p['duration'];
  const resolution = resolutionWord(p['resolution']);
  if (resolution !== undefined) body['resolution'] = resolution;
  if (typeof p['prompt_extend'] === 'boolean') body['prompt_optimizer'] = p['prompt_extend'];
  return { ok: true, body };
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const v1 = isV1Model(ctx.upstreamModel);
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  let built: Built;
  try {
    built = v1 ? buildV1(ctx, job) : await buildV2(ctx, job);
  } catch (err) {
    if (err instanceof MediaInputError) return { outcome: 'rejected', error: failure('unsupported_value', clip(err.message), err.param) };
    throw err;
  }
  if (!built.ok) return built.outcome;
  const answer = await ctx.http.request({
    method: 'POST',
    path: v1 ? '/v1/video_generation' : '/v2/video_generation',
    headers: { authorization: `Bearer ${ctx.apiKey}` },
    json: built.body,
  });
  const requestId = requestIdOf(answer);
  const byClass = submitByHttpClass(
    answer,
    (status) => {
      const error = answer.kind === 'response' ? businessError(answer.json) : undefined;
      return error ? failureOf(error.code, error.message, requestId) : upstreamError(`MiniMax HTTP ${status}`, requestId);
    },
    requestId,
  );
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { outcome: 'unknown', reason: 'no answer' };
  const error = businessError(answer.json);
  if (error) return classifyRefusal(error.code, error.message, requestId);
  const id = validUpstreamId(pick(answer.json, 'task_id'));
  // A 2xx without a task id may still have created the job: never assume it did not.
  if (id === undefined) return { outcome: 'unknown', reason: 'MiniMax answered 2xx without a task_id' };
  return { outcome: 'accepted', upstreamId: v1 ? `${V1_PREFIX}${id}` : id, ...(requestId === undefined ? {} : { requestId }) };
}

async function pollV2(ctx: ChannelContext, id: string): Promise<PollOutcome> {
  const answer = await ctx.http.request({
    method: 'GET',
    path: `/v2/query/video_generation/${encodeURIComponent(id)}`,
    headers: { authorization: `Bearer ${ctx.apiKey}` },
  });
  // The query keeps 7 days of tasks; an id outside that (or never known) is answered "invalid task_id".
  const unknownId = answer.kind === 'response' ? businessError(answer.json) : undefined;
  if (unknownId && /invalid task_?id/i.test(unknownId.message)) return { state: 'not_found', upstreamWord: clip(unknownId.message, 64) };
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const task = asRecord(pick(answer.json, 'task'));
  if (!task) {
    const error = businessError(answer.json);
    if (error && RATE_LIMITED.has(error.code)) return { state: 'throttled' };
    return { state: 'transient', reason: error ? `MiniMax ${error.code}: ${clip(error.message, 80)}` : 'MiniMax answer without task' };
  }
  const word = asString(task['status']) ?? '';
  const requestId = requestIdOf(answer);
  switch (word.toLowerCase()) {
    case 'queued':
      return { state: 'queued', upstreamWord: word };
    case 'running':
    case 'processing':
      return { state: 'running', upstreamWord: word };
    case 'succeeded':
    case 'success': {
      const url = asString(pick(task, 'content.url'));
      if (url === undefined)
        return { state: 'failed', error: failure('output_invalid', 'MiniMax reported success without content.url', '', requestId), upstreamWord: word };
      const seconds = positive(pick(task, 'usage.output_seconds')) ?? positive(pick(task, 'usage.total_seconds'));
      return seconds === undefined
        ? { state: 'succeeded', outputs: [{ type: 'video', url }], upstreamWord: word }
        : { state: 'succeeded', outputs: [{ type: 'video', url }], upstreamWord: word, reportedUsage: { seconds, videos: 1 } };
    }
    case 'failed':
    case 'fail': {
      const message = asString(pick(task, 'error.message')) ?? 'the task failed';
      const code = asNumber(pick(task, 'error.code')) ?? codeInMessage(message) ?? 0;
      return { state: 'failed', error: failureOf(code, message, requestId), upstreamWord: word };
    }
    case 'cancelled':
    case 'canceled':
      return { state: 'failed', error: upstreamError('MiniMax cancelled the task', requestId), upstreamWord: word };
    // Not among the statuses MiniMax documents (queued, running, succeeded, failed, cancelled):
    // a router that forwards v2 tasks lists it as terminal. Read as one, so such a task fails
    // now rather than looking like it runs until timeout_s; it costs nothing if never sent.
    case 'expired':
      return { state: 'failed', error: failure('upstream_timeout', 'MiniMax expired the task before it ran', '', requestId), upstreamWord: word };
    default:
      return unknownWord(ctx, word);
  }
}

async function pollV1(ctx: ChannelContext, id: string): Promise<PollOutcome> {
  const auth = { authorization: `Bearer ${ctx.apiKey}` };
  const answer = await ctx.http.request({ method: 'GET', path: `/v1/query/video_generation?task_id=${encodeURIComponent(id)}`, headers: auth });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const word = asString(pick(answer.json, 'status')) ?? '';
  const error = businessError(answer.json);
  const requestId = requestIdOf(answer);
  if (error && word !== 'Fail') {
    if (RATE_LIMITED.has(error.code)) return { state: 'throttled' };
    // 2013 on a query is how v1 says the id is not (or no longer) known.
    if (error.code === 2013) return { state: 'not_found', upstreamWord: `base_resp ${error.code}` };
    return { state: 'transient', reason: `MiniMax ${error.code}: ${clip(error.message, 80)}` };
  }
  switch (word) {
    case 'Preparing':
    case 'Queueing':
      return { state: 'queued', upstreamWord: word };
    case 'Processing':
      return { state: 'running', upstreamWord: word };
    case 'Fail':
      return { state: 'failed', error: failureOf(error?.code ?? 0, error?.message ?? 'the task failed', requestId), upstreamWord: word };
    case 'Success':
      return retrieveV1(ctx, asString(pick(answer.json, 'file_id')) ?? '', word, requestId);
    default:
      return unknownWord(ctx, word);
  }
}

async function retrieveV1(ctx: ChannelContext, fileId: string, word: string, requestId: string | undefined): Promise<PollOutcome> {
  if (fileId === '')
    return { state: 'failed', error: failure('output_invalid', 'MiniMax reported Success without a file_id', '', requestId), upstreamWord: word };
  const answer = await ctx.http.request({
    method: 'GET',
    path: `/v1/files/retrieve?file_id=${encodeURIComponent(fileId)}`,
    headers: { authorization: `Bearer ${ctx.apiKey}` },
  });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass.state === 'not_found' ? { state: 'transient', reason: 'files/retrieve answered 404' } : byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const error = businessError(answer.json);
  if (error)
    return RATE_LIMITED.has(error.code) ? { state: 'throttled' } : { state: 'transient', reason: `files/retrieve ${error.code}: ${clip(error.message, 80)}` };
  const url = asString(pick(answer.json, 'file.download_url')) ?? asString(pick(answer.json, 'file.backup_download_url'));
  if (url === undefined)
    return { state: 'failed', error: failure('output_invalid', 'MiniMax files/retrieve gave no download_url', '', requestId), upstreamWord: word };
  return { state: 'succeeded', outputs: [{ type: 'video', url }], upstreamWord: word };
}

export const minimaxAdapter: ProtocolAdapter = {
  protocol: 'minimax',
  paramMapping: minimaxParamMapping,
  check,
  submit,
  poll(ctx, upstreamId) {
    return upstreamId.startsWith(V1_PREFIX) ? pollV1(ctx, upstreamId.slice(V1_PREFIX.length)) : pollV2(ctx, upstreamId);
  },
  async cancel(ctx, upstreamId) {
    if (upstreamId.startsWith(V1_PREFIX)) return { outcome: 'not_cancellable', reason: 'MiniMax v1 documents no cancel' };
    const answer = await ctx.http.request({
      method: 'DELETE',
      path: `/v2/video_generation/${encodeURIComponent(upstreamId)}`,
      headers: { authorization: `Bearer ${ctx.apiKey}` },
    });
    if (answer.kind !== 'response') return { outcome: 'transient', reason: answer.reason };
    if (answer.status >= 200 && answer.status <= 299 && businessError(answer.json) === undefined) return { outcome: 'cancelled' };
    if (answer.status === 429 || answer.status >= 500) return { outcome: 'transient', reason: `HTTP ${answer.status}` };
    return { outcome: 'not_cancellable', reason: clip(asString(pick(answer.json, 'error.message')) ?? `HTTP ${answer.status}`, 120) };
  },
  async probe(ctx) {
    // Listing one task is the cheapest authenticated call; a v1-only account answers it as well.
    const answer = await ctx.http.request({
      method: 'GET',
      path: '/v2/query/video_generation?page_num=1&page_size=1',
      headers: { authorization: `Bearer ${ctx.apiKey}` },
    });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    const error = businessError(answer.json);
    if (answer.status >= 200 && answer.status <= 299 && !error) return { ok: true, detail: `HTTP ${answer.status}` };
    return { ok: false, reason: error ? `MiniMax ${error.code}: ${clip(error.message, 80)}` : `HTTP ${answer.status}` };
  },
};
