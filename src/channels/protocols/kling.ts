/**
 * `kling`: Kling's own API (docs/channels.md#protocol-kling;
 * https://app.klingai.com/global/dev/document-api/apiReference/commonInfo (auth, error codes),
 * https://app.klingai.com/global/dev/document-api/apiReference/model/textToVideo and
 * .../model/imageToVideo (create and query)).
 *
 * - Auth: `Authorization: Bearer <JWT>` signed by the channel (kling-auth.ts).
 * - Submit: `POST /v1/videos/text2video`, or `/v1/videos/image2video` when a first frame is
 *   given -> `{code: 0, data: {task_id, task_status}}`. The upstream id is `<endpoint>:<task_id>`:
 *   the query path depends on the endpoint, and any process must be able to poll.
 * - `external_task_id` carries our task id: "customized task ID ... must be unique within a
 *   user account", and a task can be queried by it. A submission whose answer was lost is found
 *   again that way (`reconcile`), so it is never paid twice and never lost.
 * - Poll: `GET /v1/videos/<endpoint>/<task_id>` -> `task_status` submitted | processing | succeed |
 *   failed, `task_status_msg`, `task_result.videos[].url`, `final_unit_deduction` (the units the
 *   task cost, reported as usage).
 * - Errors: an HTTP status and a business `code` (commonInfo "Error codes"): 1000-1004 our
 *   token, 1100-1103 the account (arrears, resource packs exhausted, no access), 1200-1203 the
 *   request, 1300-1301 platform or content-security policy (content_policy_violation), 1302-1304
 *   rate, concurrency and IP policy (waited out), 5000-5002 Kling's side.
 * - No cancel: the API documents none.
 */
import {
  asArray,
  asNumber,
  asString,
  clip,
  mediaRejection,
  pick,
  policyViolation,
  positive,
  problemRejection,
  specOf,
  unknownWord,
  upstreamError,
  validUpstreamId,
  withRequestId,
} from '../adapter-kit.js';
import { failure, type UpstreamFailure } from '../failure.js';
import { checkProfile } from '../profiles.js';
import {
  MediaInputError,
  type ChannelContext,
  type ChannelJob,
  type HttpOutcome,
  type ParamMapping,
  type PollOutcome,
  type ProtocolAdapter,
  type ReconcileOutcome,
  type SubmitOutcome,
  type TargetSpec,
} from '../protocol.js';
import { NO_REFERENCE_AV, oneMp4PerTask } from './video-rows.js';

type Endpoint = 'text2video' | 'image2video';
const UPSTREAM_ID = /^(text2video|image2video):([A-Za-z0-9_-]{1,200})$/;
/** A rate-limited answer carries no Retry-After (commonInfo): wait this long before the next try. */
const RATE_WAIT_MS = 5_000;
/** Words of a failed task's `task_status_msg` that say a policy refused it. */
const POLICY_WORDS = /risk|sensitive|policy|violat|prohibit|inappropriate|content security|moderat|censor/i;

export const klingParamMapping: readonly ParamMapping[] = [
  { param: 'prompt', upstream: 'prompt', handling: 'mapped', note: 'at most 2500 characters (checked upstream)' },
  { param: 'negative_prompt', upstream: 'negative_prompt', handling: 'mapped' },
  { param: 'image', upstream: 'image (image2video)', handling: 'mapped', note: 'URL as given; a data URL is sent as raw Base64, as Kling asks' },
  { param: 'end_image', upstream: 'image_tail (image2video)', handling: 'mapped', note: 'needs a first frame' },
  { param: 'duration', upstream: 'duration', handling: 'mapped', note: 'sent as a string: "5" or "10" (kling-v2-6), "3" to "15" (kling-v3)' },
  { param: 'resolution', upstream: 'mode', handling: 'mapped', note: '720p -> std, 1080p -> pro' },
  { param: 'aspect_ratio', upstream: 'aspect_ratio (text2video)', handling: 'mapped', note: '16:9, 9:16 or 1:1; an image sets its own' },
  { param: 'audio_enable', upstream: 'sound', handling: 'mapped', note: 'true -> on, false -> off' },
  { param: 'images', upstream: '', handling: 'refused', note: 'reference images are another endpoint (multi-image2video)' },
  ...NO_REFERENCE_AV,
  { param: 'seed', upstream: '', handling: 'refused', note: 'Kling takes no seed; -1 is accepted' },
  { param: 'prompt_extend', upstream: '', handling: 'refused', note: 'Kling has no prompt rewriting switch; false is accepted' },
  ...oneMp4PerTask('Kling'),
];

const auth = (ctx: ChannelContext): Record<string, string> => ({ authorization: `Bearer ${ctx.kling?.token() ?? ''}` });

function check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  if (kind !== 'video') return { param: 'model', message: `'model' cannot be sent through channel ${target.channel}: the kling protocol makes videos only` };
  return checkProfile(target.profile, kind, params, `Kling model ${target.upstreamModel}`);
}

/** What a business code means (commonInfo "Error codes"). */
export type KlingFault = 'ok' | 'channel' | 'rate' | 'policy' | 'request' | 'server' | 'not_found';
export function klingFault(code: number | undefined): KlingFault {
  if (code === 0) return 'ok';
  if (code === undefined) return 'server';
  if (code >= 1000 && code <= 1004) return 'channel';
  if (code >= 1100 && code <= 1103) return 'channel';
  if (code === 1203) return 'not_found';
  if (code >= 1200 && code <= 1299) return 'request';
  if (code === 1300 || code === 1301) return 'policy';
  if (code >= 1302 && code <= 1304) return code === 1304 ? 'channel' : 'rate';
  return 'server';
}

interface Envelope {
  readonly code: number | undefined;
  readonly message: string;
  readonly requestId: string | undefined;
}
function envelope(answer: HttpOutcome & { kind: 'response' }): Envelope {
  return {
    code: asNumber(pick(answer.json, 'code')),
    message: asString(pick(answer.json, 'message')) ?? '',
    requestId: asString(pick(answer.json, 'request_id')),
  };
}

/** A Kling image: a URL as is; a data URL as the Base64 text alone ("without the data: prefix", imageToVideo `image`). */
async function klingImage(ctx: ChannelContext, value: unknown, param: string): Promise<string> {
  if (typeof value !== 'string') throw new MediaInputError(param, `'${param}' must be an image URL or data URL`);
  if (ctx.media.kind(value) === 'https') return value;
  return (await ctx.media.bytes(value)).bytes.toString('base64');
}

async function body(ctx: ChannelContext, job: ChannelJob, endpoint: Endpoint): Promise<Record<string, unknown>> {
  const p = job.params;
  const out: Record<string, unknown> = { model_name: ctx.upstreamModel, external_task_id: job.taskId };
  if (typeof p['prompt'] === 'string' && p['prompt'] !== '') out['prompt'] = p['prompt'];
  if (typeof p['negative_prompt'] === 'string' && p['negative_prompt'] !== '') out['negative_prompt'] = p['negative_prompt'];
  if (typeof p['duration'] === 'number') out['duration'] = String(p['duration']);
  if (p['resolution'] === '720p') out['mode'] = 'std';
  if (p['resolution'] === '1080p') out['mode'] = 'pro';
  if (typeof p['audio_enable'] === 'boolean') out['sound'] = p['audio_enable'] ? 'on' : 'off';
  if (endpoint === 'text2video') {
    if (typeof p['aspect_ratio'] === 'string' && p['aspect_ratio'] !== 'adaptive') out['aspect_ratio'] = p['aspect_ratio'];
  } else {
    out['image'] = await klingImage(ctx, p['image'], 'image');
    if (p['end_image'] !== undefined) out['image_tail'] = await klingImage(ctx, p['end_image'], 'end_image');
  }
  return out;
}

function refusal(fault: KlingFault, env: Envelope, status: number): UpstreamFailure {
  const text = `Kling ${status} code ${env.code ?? '?'}: ${env.message || 'request refused'}`;
  return fault === 'policy' ? policyViolation(text, env.requestId) : failure('invalid_parameter', withRequestId(clip(text), env.requestId), '', env.requestId);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const endpoint: Endpoint = job.params['image'] !== undefined ? 'image2video' : 'text2video';
  let json: Record<string, unknown>;
  try {
    json = await body(ctx, job, endpoint);
  } catch (err) {
    if (err instanceof MediaInputError) return mediaRejection(err.param, err.message);
    throw err;
  }
  const answer = await ctx.http.request({ method: 'POST', path: `/v1/videos/${endpoint}`, headers: auth(ctx), json });
  if (answer.kind === 'not_sent') return { outcome: 'refused', reason: `not sent: ${answer.reason}` };
  if (answer.kind === 'lost') return { outcome: 'unknown', reason: answer.reason };
  const env = envelope(answer);
  const rid = env.requestId === undefined ? {} : { requestId: env.requestId };
  const fault = answer.status >= 200 && answer.status <= 299 ? klingFault(env.code) : klingFault(env.code ?? (answer.status >= 500 ? 5000 : undefined));
  switch (fault) {
    case 'ok': {
      const id = validUpstreamId(pick(answer.json, 'data.task_id'));
      if (id === undefined || !UPSTREAM_ID.test(`${endpoint}:${id}`)) return { outcome: 'unknown', reason: 'Kling answered code 0 without a task id' };
      return { outcome: 'accepted', upstreamId: `${endpoint}:${id}`, ...rid };
    }
    case 'rate':
      return { outcome: 'refused', reason: `Kling code ${env.code ?? '?'}`, retryAfterMs: answer.retryAfterMs ?? RATE_WAIT_MS, ...rid };
    case 'channel':
      return { outcome: 'refused', reason: `Kling HTTP ${answer.status} code ${env.code ?? '?'}`, ...rid };
    case 'policy':
    case 'request':
    case 'not_found':
      return { outcome: 'rejected', error: refusal(fault, env, answer.status) };
    case 'server':
      if (answer.status === 429) return { outcome: 'refused', reason: 'HTTP 429', retryAfterMs: answer.retryAfterMs ?? RATE_WAIT_MS, ...rid };
      if (answer.status >= 400 && answer.status < 500 && answer.status !== 401 && answer.status !== 403 && answer.status !== 408)
        return { outcome: 'rejected', error: upstreamError(`Kling ${answer.status}: ${env.message || 'request refused'}`, env.requestId) };
      return { outcome: 'refused', reason: `Kling HTTP ${answer.status}`, ...rid };
  }
}

/** The task of a query answer as a poll outcome. */
function taskOutcome(ctx: ChannelContext, data: unknown, taskId: string): PollOutcome {
  const word = asString(pick(data, 'task_status')) ?? '';
  switch (word) {
    case 'submitted':
      return { state: 'queued', upstreamWord: word };
    case 'processing':
      return { state: 'running', upstreamWord: word };
    case 'failed': {
      const message = asString(pick(data, 'task_status_msg')) ?? 'the task failed';
      const text = `Kling task ${taskId} failed: ${message}`;
      return { state: 'failed', error: POLICY_WORDS.test(message) ? policyViolation(text, taskId) : upstreamError(text, taskId), upstreamWord: word };
    }
    case 'succeed': {
      const urls = asArray(pick(data, 'task_result.videos'))
        .map((video) => asString(pick(video, 'url')))
        .filter((url): url is string => url !== undefined && url !== '');
      if (urls.length === 0)
        return { state: 'failed', error: failure('output_invalid', `Kling task ${taskId} succeeded without a video`, '', taskId), upstreamWord: word };
      // final_unit_deduction is a string in the query answer ("5", "10.5"): the units this task cost.
      const credits = positive(pick(data, 'final_unit_deduction'));
      const seconds = positive(pick(asArray(pick(data, 'task_result.videos'))[0], 'duration'));
      return {
        state: 'succeeded',
        outputs: urls.map((url) => ({ type: 'video' as const, url })),
        upstreamWord: word,
        reportedUsage: { videos: urls.length, ...(credits === undefined ? {} : { credits }), ...(seconds === undefined ? {} : { seconds }) },
      };
    }
    default:
      return unknownWord(ctx, word);
  }
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const parts = UPSTREAM_ID.exec(upstreamId);
  if (!parts) return { state: 'not_found', upstreamWord: 'malformed upstream id' };
  const answer = await ctx.http.request({ method: 'GET', path: `/v1/videos/${parts[1] ?? ''}/${parts[2] ?? ''}`, headers: auth(ctx) });
  if (answer.kind !== 'response') return { state: 'transient', reason: `${answer.kind}: ${answer.reason}` };
  const env = envelope(answer);
  const fault = klingFault(env.code ?? (answer.status >= 200 && answer.status <= 299 ? undefined : answer.status === 404 ? 1203 : 5000));
  if (fault === 'rate' || answer.status === 429) return { state: 'throttled', retryAfterMs: answer.retryAfterMs ?? RATE_WAIT_MS };
  if (fault === 'not_found' || answer.status === 404) return { state: 'not_found', upstreamWord: `code ${env.code ?? answer.status}` };
  if (fault !== 'ok') return { state: 'transient', reason: `Kling HTTP ${answer.status} code ${env.code ?? '?'}` };
  return taskOutcome(ctx, pick(answer.json, 'data'), parts[2] ?? '');
}

/**
 * Finds a submission whose answer was lost by its `external_task_id` (our task id): the query
 * path takes a task id or an external task id (textToVideo and imageToVideo, "Query Task
 * (Single)": `GET /v1/videos/<endpoint>/{id}`, `task_id` and `external_task_id` both request path
 * parameters, "choose one of the two query methods"); the answer's `data.task_info.external_task_id`
 * says whose task it is. The official page could not be read from here: this follows its text as
 * third-party copies of it quote it (docs/channels.md#what-was-checked-against-official-sources).
 */
async function reconcile(ctx: ChannelContext, job: ChannelJob): Promise<ReconcileOutcome> {
  const endpoint: Endpoint = job.params['image'] !== undefined ? 'image2video' : 'text2video';
  const answer = await ctx.http.request({ method: 'GET', path: `/v1/videos/${endpoint}/${encodeURIComponent(job.taskId)}`, headers: auth(ctx) });
  if (answer.kind !== 'response') return { outcome: 'undecided', reason: `${answer.kind}: ${answer.reason}` };
  const env = envelope(answer);
  const fault = klingFault(env.code ?? (answer.status === 404 ? 1203 : 5000));
  if (fault === 'not_found') return { outcome: 'absent' };
  if (fault !== 'ok') return { outcome: 'undecided', reason: `Kling HTTP ${answer.status} code ${env.code ?? '?'}` };
  const id = validUpstreamId(pick(answer.json, 'data.task_id'));
  const external = asString(pick(answer.json, 'data.task_info.external_task_id'));
  if (id === undefined || !UPSTREAM_ID.test(`${endpoint}:${id}`)) return { outcome: 'undecided', reason: 'Kling answered code 0 without a task id' };
  if (external !== undefined && external !== job.taskId) return { outcome: 'undecided', reason: 'Kling answered another external_task_id' };
  return { outcome: 'found', upstreamId: `${endpoint}:${id}` };
}

export const klingAdapter: ProtocolAdapter = {
  protocol: 'kling',
  paramMapping: klingParamMapping,
  check,
  submit,
  poll,
  reconcile,
  async probe(ctx) {
    // The task list: cheap, authenticated, creates nothing (textToVideo "Query Task (List)").
    const answer = await ctx.http.request({ method: 'GET', path: '/v1/videos/text2video?pageNum=1&pageSize=1', headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    const code = asNumber(pick(answer.json, 'code'));
    if (answer.status === 200 && code === 0) return { ok: true, detail: 'task list' };
    return { ok: false, reason: `HTTP ${answer.status}${code === undefined ? '' : ` code ${code}`}` };
  },
};
