/**
 * fal queue (docs/channels.md#protocol-fal; https://docs.fal.ai/model-apis/model-endpoints/queue). Generic: the route's
 * `upstream_model` is the endpoint id (`fal-ai/kling-video/v2.1/pro/image-to-video`, optionally
 * `?param=field` renames, see generic-input.ts) and the body is the model's input, built from
 * the target's profile when it has one (profiles.ts).
 *
 * Status, result and cancel live under the endpoint's app, not its subpath. The submit answer
 * carries them (`status_url`, `response_url`, `cancel_url`): the app is read from
 * `response_url` (the part before `/requests/`), and only when that is missing is it derived the
 * way fal's own client does (`namespace/owner/alias` for the `workflows` and `comfy`
 * namespaces, `owner/alias` otherwise). Two segments are wrong for namespaced endpoints. The
 * upstream id is `app|request_id|kind`; paths go to the channel's base_url (the returned URLs
 * name the same host). There is no FAILED status: a failed job reads COMPLETED and its error
 * comes with the result. The queue has no idempotency key and no search: a lost submission
 * stays unknown.
 */
import {
  asArray,
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
import { fetchHttps } from '../../media/fetcher.js';
import { failure, type UpstreamFailure } from '../failure.js';
import type { ChannelContext, HttpOutcome, PollOutcome, ProtocolAdapter, ReportedUsage, SubmitOutcome, TargetSpec, UpstreamOutput } from '../protocol.js';
import { falInputOf } from '../schema-probe.js';
import { genericCheck, genericInput, genericParamMapping, parseGenericModel } from './generic-input.js';

const auth = (ctx: ChannelContext): Record<string, string> => ({ authorization: `Key ${ctx.apiKey}` });
const POLICY = /content_policy|flagged|nsfw|safety|moderat/i;

function requestIdOf(answer: HttpOutcome): string | undefined {
  return answer.kind === 'response' ? (answer.headers['x-fal-request-id'] ?? answer.headers['x-request-id']) : undefined;
}

/** fal's error bodies: `{detail: "text", error_type}` or `{detail: [{loc, msg, type}]}` (validation). */
function describeError(json: unknown): { text: string; policy: boolean } {
  const detail = pick(json, 'detail');
  if (Array.isArray(detail)) {
    const items = detail.map((item) => asRecord(item)).filter((item) => item !== undefined);
    const text = items.map((item) => `${asArray(item['loc']).join('.')}: ${asString(item['msg']) ?? ''}`).join('; ');
    return { text: text || 'validation error', policy: items.some((item) => POLICY.test(`${asString(item['type']) ?? ''} ${asString(item['msg']) ?? ''}`)) };
  }
  const text = asString(detail) ?? asString(pick(json, 'error')) ?? 'error';
  return { text, policy: POLICY.test(`${asString(pick(json, 'error_type')) ?? ''} ${text}`) };
}

function failureFrom(answer: HttpOutcome & { kind: 'response' }, requestId?: string): UpstreamFailure {
  const { text, policy } = describeError(answer.json);
  const type = answer.headers['x-fal-error-type'] ?? asString(pick(answer.json, 'error_type'));
  const message = `fal ${answer.status}${type ? ` ${type}` : ''}: ${text}`;
  return policy ? policyViolation(message, requestId) : upstreamError(message, requestId);
}

/** Where fal publishes an endpoint's OpenAPI document (`?endpoint_id=`): its public site, not the queue. */
export const FAL_OPENAPI = 'https://fal.ai/api/openapi/queue/openapi.json';
const OPENAPI_MAX_BYTES = 8 * 1024 * 1024;

/** fal's namespaces whose endpoint ids have three leading segments (fal-js `parseEndpointId`). */
const NAMESPACES = new Set(['workflows', 'comfy']);

/** The app of an endpoint id, the way fal's client derives it: `namespace/owner/alias` or `owner/alias`. */
export function falApp(path: string): string | undefined {
  const segments = path.split('/').filter(Boolean);
  const size = NAMESPACES.has(segments[0] ?? '') ? 3 : 2;
  return segments.length >= size ? segments.slice(0, size).join('/') : undefined;
}

/** The app named by the submit answer's `response_url` (`https://queue.fal.run/{app}/requests/{id}`). */
function appFromAnswer(json: unknown): string | undefined {
  const url = asString(pick(json, 'response_url'));
  if (url === undefined) return undefined;
  try {
    const match = /^\/(.+?)\/requests\/[^/]+\/?$/.exec(new URL(url).pathname);
    return match?.[1] !== undefined && !match[1].includes('|') ? decodeURIComponent(match[1]) : undefined;
  } catch {
    return undefined;
  }
}

function check(target: TargetSpec, kind: 'video' | 'image', params: Readonly<Record<string, unknown>>) {
  return genericCheck(target.profile, kind, params, `fal model ${parseGenericModel(target.upstreamModel).path}`);
}

async function submit(ctx: ChannelContext, job: Parameters<ProtocolAdapter['submit']>[1]): Promise<SubmitOutcome> {
  const model = parseGenericModel(ctx.upstreamModel);
  const app = falApp(model.path);
  if (app === undefined) return { outcome: 'refused', reason: `upstream_model '${clip(model.path, 80)}' is not an owner/app path` };
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const built = await genericInput(ctx, job, 'fal', model);
  if (!built.ok) return built.outcome;
  const answer = await ctx.http.request({ method: 'POST', path: `/${model.path}`, headers: auth(ctx), json: built.input });
  const requestId = requestIdOf(answer);
  const byClass = submitByHttpClass(
    answer,
    () => (answer.kind === 'response' ? failureFrom(answer, requestId) : upstreamError('fal refused the request')),
    requestId,
  );
  if (byClass) return byClass;
  const json = answer.kind === 'response' ? answer.json : undefined;
  const id = validUpstreamId(pick(json, 'request_id'));
  if (id === undefined || id.includes('|')) return { outcome: 'unknown', reason: 'fal answered 2xx without a request_id' };
  return { outcome: 'accepted', upstreamId: `${appFromAnswer(json) ?? app}|${id}|${job.kind}`, requestId: requestId ?? id };
}

function parseId(upstreamId: string): { app: string; id: string; kind: 'video' | 'image' } | undefined {
  const [app, id, kind] = upstreamId.split('|');
  if (!app || !id || (kind !== 'video' && kind !== 'image')) return undefined;
  return { app, id, kind };
}

/** Every file URL of a fal result, of the kind the task asked for. */
function outputsOf(json: unknown, kind: 'video' | 'image'): UpstreamOutput[] {
  const urls: string[] = [];
  const add = (value: unknown): void => {
    const url = asString(pick(value, 'url')) ?? asString(value);
    if (url !== undefined && /^https?:\/\//.test(url)) urls.push(url);
  };
  if (kind === 'video') {
    add(pick(json, 'video'));
    for (const item of asArray(pick(json, 'videos'))) add(item);
  } else {
    for (const item of asArray(pick(json, 'images'))) add(item);
    add(pick(json, 'image'));
  }
  return urls.map((url) => ({ type: kind, url }));
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const parsed = parseId(upstreamId);
  if (!parsed) return { state: 'not_found', upstreamWord: 'malformed upstream id' };
  const base = `/${parsed.app}/requests/${encodeURIComponent(parsed.id)}`;
  const answer = await ctx.http.request({ method: 'GET', path: `${base}/status`, headers: auth(ctx) });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const word = asString(pick(answer.json, 'status')) ?? '';
  switch (word) {
    case 'IN_QUEUE':
      return { state: 'queued', upstreamWord: word };
    case 'IN_PROGRESS':
      return { state: 'running', upstreamWord: word };
    case 'COMPLETED': {
      const seconds = positive(pick(answer.json, 'metrics.inference_time'));
      return result(ctx, base, parsed.kind, word, seconds === undefined ? undefined : { predict_time_s: seconds });
    }
    // Listed by one fal schema only (unverified); mapped so they never read as running forever.
    case 'FAILED':
      return { state: 'failed', error: upstreamError(`fal reported FAILED for request ${parsed.id}`, parsed.id), upstreamWord: word };
    case 'CANCELED':
    case 'CANCELLED':
      return { state: 'failed', error: upstreamError(`fal cancelled request ${parsed.id}`, parsed.id), upstreamWord: word };
    default:
      return unknownWord(ctx, word);
  }
}

async function result(ctx: ChannelContext, base: string, kind: 'video' | 'image', word: string, usage: ReportedUsage | undefined): Promise<PollOutcome> {
  const answer = await ctx.http.request({ method: 'GET', path: base, headers: auth(ctx) });
  if (answer.kind !== 'response') return { state: 'transient', reason: `result ${answer.kind}: ${answer.reason}` };
  const requestId = base.split('/').pop();
  if (answer.status >= 200 && answer.status <= 299) {
    const outputs = outputsOf(answer.json, kind);
    if (outputs.length === 0)
      return { state: 'failed', error: failure('output_invalid', `fal result holds no ${kind} URL`, '', requestId), upstreamWord: word };
    return usage === undefined
      ? { state: 'succeeded', outputs, upstreamWord: word }
      : { state: 'succeeded', outputs, upstreamWord: word, reportedUsage: usage };
  }
  if (answer.status === 429) return answer.retryAfterMs === undefined ? { state: 'throttled' } : { state: 'throttled', retryAfterMs: answer.retryAfterMs };
  if (answer.status === 404) return { state: 'not_found', upstreamWord: 'result HTTP 404' };
  // A job error carries its type; a bare 5xx on the result fetch is the transport's, not the job's.
  const typed = answer.headers['x-fal-error-type'] !== undefined || pick(answer.json, 'error_type') !== undefined;
  if (answer.status >= 500 && !typed) return { state: 'transient', reason: `result HTTP ${answer.status}` };
  return { state: 'failed', error: failureFrom(answer, requestId), upstreamWord: word };
}

export const falAdapter: ProtocolAdapter = {
  protocol: 'fal',
  paramMapping: genericParamMapping('fal'),
  check,
  submit,
  poll,
  async cancel(ctx, upstreamId) {
    const parsed = parseId(upstreamId);
    if (!parsed) return { outcome: 'not_cancellable', reason: 'malformed upstream id' };
    const answer = await ctx.http.request({ method: 'PUT', path: `/${parsed.app}/requests/${encodeURIComponent(parsed.id)}/cancel`, headers: auth(ctx) });
    if (answer.kind !== 'response') return { outcome: 'transient', reason: answer.reason };
    if (answer.status === 202 || answer.status === 200) return { outcome: 'cancelled' };
    if (answer.status === 400 || answer.status === 404)
      return { outcome: 'not_cancellable', reason: asString(pick(answer.json, 'status')) ?? `HTTP ${answer.status}` };
    return { outcome: 'transient', reason: `HTTP ${answer.status}` };
  },
  async inputSchema(ctx) {
    // fal publishes each endpoint's OpenAPI document on its public site (no key: nothing secret leaves the channel).
    const endpoint = parseGenericModel(ctx.upstreamModel).path;
    let json: unknown;
    try {
      // A public page, not the channel's origin: fetched as media inputs are (address policy, size cap, deadline).
      const { bytes } = await fetchHttps(`${FAL_OPENAPI}?endpoint_id=${encodeURIComponent(endpoint)}`, { maxBytes: OPENAPI_MAX_BYTES, timeoutMs: 10_000 });
      json = JSON.parse(bytes.toString('utf8'));
    } catch (err) {
      return { ok: false, reason: err instanceof Error ? err.message : 'no answer' };
    }
    const schema = falInputOf(json, endpoint);
    return schema ? { ok: true, schema } : { ok: false, reason: 'the endpoint publishes no input schema' };
  },
  async probe(ctx) {
    // The queue has no account endpoint: ask for a request that cannot exist; 404 proves the key.
    const app = falApp(parseGenericModel(ctx.upstreamModel).path) ?? 'fal-ai/fast-sdxl';
    const answer = await ctx.http.request({ method: 'GET', path: `/${app}/requests/00000000-0000-0000-0000-000000000000/status`, headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 401 || answer.status === 403) return { ok: false, reason: `HTTP ${answer.status}` };
    return answer.status < 500 ? { ok: true, detail: `HTTP ${answer.status}` } : { ok: false, reason: `HTTP ${answer.status}` };
  },
};
