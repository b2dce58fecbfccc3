/**
 * fal queue (docs/channels.md#protocol-fal). Generic: the route's `upstream_model` is the
 * model path (`fal-ai/kling-video/v2.1/pro/image-to-video`, optionally `?param=field` renames,
 * see generic-input.ts) and the body is the model's input. Status and result live under the
 * owner/app only, never the subpath, so the upstream id is `owner/app|request_id|kind`; the
 * adapter builds those paths on the channel's base_url (the returned absolute URLs name the
 * same host). There is no FAILED status: a failed job reads COMPLETED and its error comes with
 * the result. The queue has no idempotency key and no search: a lost submission stays unknown.
 */
import {
  asArray,
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
import type { ChannelContext, HttpOutcome, PollOutcome, ProtocolAdapter, SubmitOutcome, UpstreamOutput } from '../protocol.js';
import { genericInput, genericParamMapping, parseGenericModel } from './generic-input.js';

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

async function submit(ctx: ChannelContext, job: Parameters<ProtocolAdapter['submit']>[1]): Promise<SubmitOutcome> {
  const model = parseGenericModel(ctx.upstreamModel);
  const segments = model.path.split('/').filter(Boolean);
  if (segments.length < 2) return { outcome: 'refused', reason: `upstream_model '${clip(model.path, 80)}' is not an owner/app path` };
  const built = await genericInput(ctx, job, 'fal', model);
  if (!built.ok) return built.outcome;
  const answer = await ctx.http.request({ method: 'POST', path: `/${segments.join('/')}`, headers: auth(ctx), json: built.input });
  const requestId = requestIdOf(answer);
  const byClass = submitByHttpClass(
    answer,
    () => (answer.kind === 'response' ? failureFrom(answer, requestId) : upstreamError('fal refused the request')),
    requestId,
  );
  if (byClass) return byClass;
  const id = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'request_id'));
  if (id === undefined || id.includes('|')) return { outcome: 'unknown', reason: 'fal answered 2xx without a request_id' };
  return { outcome: 'accepted', upstreamId: `${segments.slice(0, 2).join('/')}|${id}|${job.kind}`, requestId: requestId ?? id };
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
    case 'COMPLETED':
      return result(ctx, base, parsed.kind, word);
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

async function result(ctx: ChannelContext, base: string, kind: 'video' | 'image', word: string): Promise<PollOutcome> {
  const answer = await ctx.http.request({ method: 'GET', path: base, headers: auth(ctx) });
  if (answer.kind !== 'response') return { state: 'transient', reason: `result ${answer.kind}: ${answer.reason}` };
  const requestId = base.split('/').pop();
  if (answer.status >= 200 && answer.status <= 299) {
    const outputs = outputsOf(answer.json, kind);
    if (outputs.length === 0)
      return { state: 'failed', error: failure('output_invalid', `fal result holds no ${kind} URL`, '', requestId), upstreamWord: word };
    return { state: 'succeeded', outputs, upstreamWord: word };
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
  async probe(ctx) {
    // The queue has no account endpoint: ask for a request that cannot exist; 404 proves the key.
    const segments = parseGenericModel(ctx.upstreamModel).path.split('/').filter(Boolean);
    const app = segments.length >= 2 ? segments.slice(0, 2).join('/') : 'fal-ai/fast-sdxl';
    const answer = await ctx.http.request({ method: 'GET', path: `/${app}/requests/00000000-0000-0000-0000-000000000000/status`, headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 401 || answer.status === 403) return { ok: false, reason: `HTTP ${answer.status}` };
    return answer.status < 500 ? { ok: true, detail: `HTTP ${answer.status}` } : { ok: false, reason: `HTTP ${answer.status}` };
  },
};
