/**
 * `vertex`: Veo on Vertex AI (docs/channels.md#protocol-vertex;
 * https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation;
 * googleapis/js-genai/src/models.ts `generateVideos` and js-genai/src/operations.ts `fetchPredictVideosOperationInternal`).
 *
 * - Auth: `Authorization: Bearer <access token>` from the service account's JWT-bearer grant
 *   (google-auth.ts), cached per channel. A grant that fails means nothing reached Vertex: the
 *   submit is refused (fail over), the poll transient.
 * - Submit: `POST /v1/projects/{project}/locations/{location}/publishers/google/models/{model}:predictLongRunning`
 *   (body in veo.ts) -> `{name: "projects/.../operations/{id}"}`; the name is the upstream id.
 * - Poll: `POST /v1/{model resource}:fetchPredictOperation` `{operationName}` (the model resource
 *   is the name before `/operations/`, as the SDK derives it) -> `{done?, error?, response}`.
 *   Not done is running; `error` failed; `response.videos[]` succeeded; only
 *   `raiMediaFilteredCount` / `raiMediaFilteredReasons` was filtered: content_policy_violation.
 * - Output: without `parameters.storageUri` Vertex answers each video inline
 *   (`bytesBase64Encoded`), which is what we ask for: the bytes go to our storage as a `data:`
 *   URL through the output copy, never to a client. `storageUri` is never sent, because a `gcsUri`
 *   answer needs Cloud Storage access this channel does not have; a `gcsUri` answer fails
 *   `output_invalid` saying so. The poll answer may be large (an 8 s 1080p video in Base64),
 *   so it is read with a larger cap (VERTEX_MAX_ANSWER).
 * - Rate limits: 429 RESOURCE_EXHAUSTED, Retry-After or `google.rpc.RetryInfo`.
 * - No cancel (Vertex documents none for these operations); no reconcile (nothing finds an
 *   operation by a client reference): a lost submit answer fails `upstream_submission_unknown`.
 */
import { asArray, asString, clip, pick, pollByHttpClass, problemRejection, specOf, submitByHttpClass, upstreamError, validUpstreamId } from '../adapter-kit.js';
import { failure } from '../failure.js';
import { checkProfile } from '../profiles.js';
import type { ChannelContext, ChannelJob, GoogleAccess, PollOutcome, ProtocolAdapter, SubmitOutcome, TargetSpec, UpstreamOutput } from '../protocol.js';
import { filteredFailure, operationFailure, retryAfterOf, rpcFailure, veoBody, veoParamMapping } from './veo.js';

/** 512 MiB of Base64: above the output copy's own cap, so the copy is what refuses a huge video. */
export const VERTEX_MAX_ANSWER = 700 * 1024 * 1024;
const OPERATION = /^(projects\/[^/]+\/locations\/[^/]+\/publishers\/google\/models\/[A-Za-z0-9._-]+)\/operations\/[A-Za-z0-9._-]+$/;

function check(target: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  if (kind !== 'video')
    return { param: 'model', message: `'model' cannot be sent through channel ${target.channel}: the vertex protocol makes Veo videos only` };
  return checkProfile(target.profile, kind, params, `Vertex AI model ${target.upstreamModel}`);
}

function access(ctx: ChannelContext): GoogleAccess | undefined {
  return ctx.google;
}

async function bearer(google: GoogleAccess): Promise<{ headers: Record<string, string> } | { kind: 'not_sent' | 'refused' | 'lost'; reason: string }> {
  const token = await google.token();
  if (!token.ok) return { kind: token.kind, reason: token.reason };
  return { headers: { authorization: `Bearer ${token.token}` } };
}

function modelPath(google: GoogleAccess, model: string): string {
  return `/v1/projects/${encodeURIComponent(google.project)}/locations/${encodeURIComponent(google.location)}/publishers/google/models/${encodeURIComponent(model)}`;
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const google = access(ctx);
  if (!google) return { outcome: 'refused', reason: 'the channel has no Vertex AI credentials' };
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const built = await veoBody(ctx, job, { vertex: true });
  if (!built.ok) return built.outcome;
  const auth = await bearer(google);
  // No token: nothing was sent to Vertex, whatever happened at the token endpoint.
  if (!('headers' in auth)) return { outcome: 'refused', reason: `no access token (${auth.reason})` };
  const answer = await ctx.http.request({
    method: 'POST',
    path: `${modelPath(google, ctx.upstreamModel)}:predictLongRunning`,
    headers: auth.headers,
    json: built.body,
  });
  const byClass = submitByHttpClass(answer, () =>
    answer.kind === 'response' ? rpcFailure('Vertex AI', answer) : upstreamError('Vertex AI refused the request'),
  );
  if (byClass) {
    const retry = retryAfterOf(answer);
    return byClass.outcome === 'refused' && byClass.retryAfterMs === undefined && retry !== undefined ? { ...byClass, retryAfterMs: retry } : byClass;
  }
  const name = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'name'));
  if (name === undefined || !OPERATION.test(name)) return { outcome: 'unknown', reason: 'Vertex AI answered 2xx without an operation name' };
  return { outcome: 'accepted', upstreamId: name, requestId: name.split('/').pop() ?? name };
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const google = access(ctx);
  const resource = OPERATION.exec(upstreamId)?.[1];
  if (!google) return { state: 'transient', reason: 'the channel has no Vertex AI credentials' };
  if (resource === undefined) return { state: 'not_found', upstreamWord: 'malformed operation name' };
  const auth = await bearer(google);
  if (!('headers' in auth)) return { state: 'transient', reason: `no access token (${auth.reason})` };
  const answer = await ctx.http.request({
    method: 'POST',
    path: `/v1/${resource}:fetchPredictOperation`,
    headers: auth.headers,
    json: { operationName: upstreamId },
    maxBytes: VERTEX_MAX_ANSWER,
    timeoutMs: 120_000,
  });
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
  if (pick(op, 'error') !== undefined) return { state: 'failed', error: operationFailure('Vertex AI', pick(op, 'error'), id), upstreamWord: 'done: error' };
  const response = pick(op, 'response');
  const videos = asArray(pick(response, 'videos'));
  if (videos.length === 0) {
    const filtered = filteredFailure('Vertex AI', response, id);
    if (filtered) return { state: 'failed', error: filtered, upstreamWord: 'done: filtered' };
    return { state: 'failed', error: failure('output_invalid', `Vertex AI operation ${id} finished without a video`, '', id), upstreamWord: 'done' };
  }
  const outputs: UpstreamOutput[] = [];
  for (const video of videos) {
    const inline = asString(pick(video, 'bytesBase64Encoded'));
    if (inline === undefined || inline === '') {
      const gcs = asString(pick(video, 'gcsUri'));
      const why =
        gcs === undefined ? 'neither inline bytes nor a URI' : 'a Cloud Storage URI (storageUri is set on the model side), which this channel cannot read';
      return { state: 'failed', error: failure('output_invalid', `Vertex AI operation ${id} answered ${clip(why)}`, '', id), upstreamWord: 'done' };
    }
    outputs.push({ type: 'video', url: `data:${asString(pick(video, 'mimeType')) ?? 'video/mp4'};base64,${inline}` });
  }
  return { state: 'succeeded', outputs, upstreamWord: 'done', reportedUsage: { videos: outputs.length } };
}

export const vertexAdapter: ProtocolAdapter = {
  protocol: 'vertex',
  paramMapping: veoParamMapping(true),
  check,
  submit,
  poll,
  async probe(ctx) {
    const google = access(ctx);
    if (!google) return { ok: false, reason: 'the channel has no Vertex AI credentials' };
    const auth = await bearer(google);
    if (!('headers' in auth)) return { ok: false, reason: `no access token (${auth.reason})` };
    // The location's operation list: one cheap authenticated read (projects.locations.operations.list).
    const path = `/v1/projects/${encodeURIComponent(google.project)}/locations/${encodeURIComponent(google.location)}/operations?pageSize=1`;
    const answer = await ctx.http.request({ method: 'GET', path, headers: auth.headers });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 200) return { ok: true, detail: `project ${clip(google.project, 40)} in ${clip(google.location, 30)}` };
    return { ok: false, reason: `HTTP ${answer.status}` };
  },
};
