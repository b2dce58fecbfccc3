/**
 * `gemini`: Veo through the Gemini API (docs/channels.md#protocol-gemini;
 * https://ai.google.dev/gemini-api/docs/video, https://ai.google.dev/api/models#method:-models.predictlongrunning,
 * https://ai.google.dev/api/batch-mode#Operation; googleapis/js-genai/src/models.ts `generateVideos`,
 * js-genai/src/operations.ts `getVideosOperation`, js-genai/src/node/_node_downloader.ts).
 *
 * - Auth: `x-goog-api-key: <key>` on every call (https://ai.google.dev/gemini-api/docs/api-key).
 * - Submit: `POST /v1beta/models/{model}:predictLongRunning` (body in veo.ts) -> an operation
 *   `{name: "models/{model}/operations/{id}"}`; the name is the upstream id.
 * - Poll: `GET /v1beta/{name}` -> `{done?, error?, response.generateVideoResponse}`. There are no
 *   status words: not done is running; done with `error` failed; done with
 *   `generatedSamples[].video.uri` succeeded; done with only `raiMediaFilteredCount` /
 *   `raiMediaFilteredReasons` was filtered by Responsible AI: content_policy_violation.
 * - Output: the sample's URI is a Files API download (`files/{id}:download?alt=media`) that needs
 *   the key. It is rebuilt on the channel's origin and fetched by the output copy with the key
 *   header, sent to that origin only (output-copy.ts); the URI is never shown to a client.
 * - Rate limits: 429 RESOURCE_EXHAUSTED, waited out by Retry-After or `google.rpc.RetryInfo`.
 * - No cancel: the Gemini API documents no cancel for video operations.
 * - No reconcile: the request carries no client reference and operations cannot be listed by
 *   one, so a lost submit answer fails `upstream_submission_unknown`.
 */
import { asArray, asString, clip, pick, pollByHttpClass, problemRejection, specOf, submitByHttpClass, upstreamError, validUpstreamId } from '../adapter-kit.js';
import { failure } from '../failure.js';
import { checkProfile } from '../profiles.js';
import type { ChannelContext, ChannelJob, PollOutcome, ProtocolAdapter, SubmitOutcome, TargetSpec } from '../protocol.js';
import { filteredFailure, keyInvalid, operationFailure, retryAfterOf, rpcFailure, veoBody, veoParamMapping } from './veo.js';

const API = '/v1beta';
const auth = (ctx: ChannelContext): Record<string, string> => ({ 'x-goog-api-key': ctx.apiKey });
/** An operation name as the Gemini API gives it: `models/{model}/operations/{id}`. */
const OPERATION = /^models\/[A-Za-z0-9._-]+\/operations\/[A-Za-z0-9._-]+$/;

function check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  if (kind !== 'video')
    return { param: 'model', message: `'model' cannot be sent through channel ${target.channel}: the gemini protocol makes Veo videos only` };
  return checkProfile(target.profile, kind, params, `Gemini API model ${target.upstreamModel}`);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const built = await veoBody(ctx, job, { vertex: false });
  if (!built.ok) return built.outcome;
  const path = `${API}/models/${encodeURIComponent(ctx.upstreamModel)}:predictLongRunning`;
  const answer = await ctx.http.request({ method: 'POST', path, headers: auth(ctx), json: built.body });
  if (answer.kind === 'response' && answer.status === 400 && keyInvalid(answer.json)) return { outcome: 'refused', reason: 'HTTP 400 API_KEY_INVALID' };
  const byClass = submitByHttpClass(answer, () =>
    answer.kind === 'response' ? rpcFailure('Gemini API', answer) : upstreamError('Gemini API refused the request'),
  );
  if (byClass) {
    const retry = retryAfterOf(answer);
    return byClass.outcome === 'refused' && byClass.retryAfterMs === undefined && retry !== undefined ? { ...byClass, retryAfterMs: retry } : byClass;
  }
  const name = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'name'));
  if (name === undefined || !OPERATION.test(name)) return { outcome: 'unknown', reason: 'the Gemini API answered 2xx without an operation name' };
  return { outcome: 'accepted', upstreamId: name, requestId: name.split('/').pop() ?? name };
}

/** The Files API id of a sample URI (js-genai/src/_transformers.ts `tFileName`). */
export function fileIdOf(uri: string): string | undefined {
  const after = uri.split('files/')[1];
  const id = after === undefined ? undefined : /^[a-z0-9]+/.exec(after)?.[0];
  return id === undefined || id === '' ? undefined : id;
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  if (!OPERATION.test(upstreamId)) return { state: 'not_found', upstreamWord: 'malformed operation name' };
  const answer = await ctx.http.request({ method: 'GET', path: `${API}/${upstreamId}`, headers: auth(ctx) });
  if (answer.kind === 'response' && answer.status === 429) {
    const retry = retryAfterOf(answer);
    return retry === undefined ? { state: 'throttled' } : { state: 'throttled', retryAfterMs: retry };
  }
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const op = answer.json;
  const id = upstreamId.split('/').pop() ?? upstreamId;
  if (pick(op, 'done') !== true) return { state: 'running', upstreamWord: 'not done' };
  if (pick(op, 'error') !== undefined) return { state: 'failed', error: operationFailure('Gemini API', pick(op, 'error'), id), upstreamWord: 'done: error' };
  const response = pick(op, 'response.generateVideoResponse');
  const uris = asArray(pick(response, 'generatedSamples'))
    .map((sample) => asString(pick(sample, 'video.uri')))
    .filter((uri): uri is string => uri !== undefined);
  if (uris.length === 0) {
    const filtered = filteredFailure('Gemini API', response, id);
    if (filtered) return { state: 'failed', error: filtered, upstreamWord: 'done: filtered' };
    return { state: 'failed', error: failure('output_invalid', `Gemini API operation ${id} finished without a video`, '', id), upstreamWord: 'done' };
  }
  const outputs = [];
  for (const uri of uris) {
    const file = fileIdOf(uri);
    if (file === undefined)
      return {
        state: 'failed',
        error: failure('output_invalid', `Gemini API operation ${id} names a video that is not a file (${clip(uri, 60)})`, '', id),
        upstreamWord: 'done',
      };
    // Rebuilt on the channel's origin: the key goes nowhere else (the SDK downloads it the same way).
    outputs.push({ type: 'video' as const, url: `${ctx.baseUrl}${API}/files/${file}:download?alt=media`, headers: auth(ctx) });
  }
  return { state: 'succeeded', outputs, upstreamWord: 'done', reportedUsage: { videos: outputs.length } };
}

export const geminiAdapter: ProtocolAdapter = {
  protocol: 'gemini',
  paramMapping: veoParamMapping(false),
  check,
  submit,
  poll,
  async probe(ctx) {
    // models.get: cheap, authenticated, and proves the model name too (https://ai.google.dev/api/models#method:-models.get).
    // A channel no route names has no model to ask about: models.list proves the key alone.
    const path = ctx.upstreamModel === '' ? `${API}/models?pageSize=1` : `${API}/models/${encodeURIComponent(ctx.upstreamModel)}`;
    const answer = await ctx.http.request({ method: 'GET', path, headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 200) return { ok: true, detail: `model ${clip(asString(pick(answer.json, 'name')) ?? (ctx.upstreamModel || 'list'), 80)}` };
    return { ok: false, reason: `HTTP ${answer.status}` };
  },
};
