/**
 * Replicate predictions (docs/channels.md#protocol-replicate; https://replicate.com/docs/reference/http). Generic: the route's
 * `upstream_model` is `owner/name` (an official model: `POST /v1/models/{owner}/{name}/predictions`)
 * or `owner/name:version` / a bare version id (`POST /v1/predictions` with `version`), optionally
 * with `?param=field` renames (generic-input.ts). No `Prefer: wait`: a held connection would be
 * a render slot by another name. The upstream id is `prediction_id|kind`. Outputs are deleted an
 * hour after an API prediction ends (`data_removed`), which the copy must beat; a prediction read
 * after that fails `output_invalid`. Replicate has no idempotency key: a lost create stays unknown.
 *
 * Replicate ignores inputs a model does not declare, so a wrong field name is not an error
 * upstream, only a request silently not honoured (flux-schnell has no width or height: every
 * image came back square). The target profile (profiles.ts) sends only the model's own inputs;
 * `mediagate channels check --probe` compares a route's mapping with the model's published schema.
 */
import {
  asString,
  positive,
  problemRejection,
  specOf,
  clip,
  pick,
  pollByHttpClass,
  policyViolation,
  submitByHttpClass,
  unknownWord,
  upstreamError,
  upstreamProgress,
  validUpstreamId,
} from '../adapter-kit.js';
import { failure } from '../failure.js';
import type { ChannelContext, ChannelJob, PollOutcome, ProtocolAdapter, SubmitOutcome, TargetSpec, UpstreamOutput } from '../protocol.js';
import { inputOf } from '../schema-probe.js';
import { genericCheck, genericInput, genericParamMapping, parseGenericModel } from './generic-input.js';

const auth = (ctx: ChannelContext): Record<string, string> => ({ authorization: `Bearer ${ctx.apiKey}` });
const POLICY = /nsfw|safety|sensitive|flagged|content polic|moderat/i;
const VERSION_ID = /^[0-9a-f]{64}$/i;

/** Where to create: an official model path, or a version. */
function target(path: string): { path: string; version?: string } | undefined {
  if (VERSION_ID.test(path)) return { path: '/v1/predictions', version: path };
  const [model = '', version] = path.split(':', 2);
  const segments = model.split('/').filter(Boolean);
  if (segments.length !== 2) return undefined;
  if (version !== undefined && version !== '') return { path: '/v1/predictions', version };
  return { path: `/v1/models/${segments.map(encodeURIComponent).join('/')}/predictions` };
}

function problemText(json: unknown, status: number): string {
  return asString(pick(json, 'detail')) ?? asString(pick(json, 'title')) ?? `HTTP ${status}`;
}

function check(spec: TargetSpec, kind: ChannelJob['kind'], params: ChannelJob['params']) {
  return genericCheck(spec.profile, kind, params, `Replicate model ${parseGenericModel(spec.upstreamModel).path}`);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const model = parseGenericModel(ctx.upstreamModel);
  const where = target(model.path);
  if (!where) return { outcome: 'refused', reason: `upstream_model '${clip(model.path, 80)}' is neither owner/name nor a version` };
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const built = await genericInput(ctx, job, 'replicate', model);
  if (!built.ok) return built.outcome;
  const body = where.version === undefined ? { input: built.input } : { version: where.version, input: built.input };
  const answer = await ctx.http.request({ method: 'POST', path: where.path, headers: auth(ctx), json: body });
  const byClass = submitByHttpClass(answer, (status) => {
    const text = answer.kind === 'response' ? problemText(answer.json, status) : `HTTP ${status}`;
    return POLICY.test(text) ? policyViolation(`Replicate ${status}: ${text}`) : upstreamError(`Replicate ${status}: ${text}`);
  });
  if (byClass) return byClass;
  const id = validUpstreamId(pick(answer.kind === 'response' ? answer.json : undefined, 'id'));
  if (id === undefined || id.includes('|')) return { outcome: 'unknown', reason: 'Replicate answered 2xx without a prediction id' };
  return { outcome: 'accepted', upstreamId: `${id}|${job.kind}`, requestId: id };
}

/** Output is a URL, a list of URLs, or an object holding them, depending on the model. */
function outputsOf(output: unknown, kind: 'video' | 'image'): UpstreamOutput[] {
  const urls: string[] = [];
  const visit = (value: unknown, depth: number): void => {
    if (depth > 3) return;
    if (typeof value === 'string') {
      if (/^https?:\/\//.test(value)) urls.push(value);
    } else if (Array.isArray(value)) for (const item of value) visit(item, depth + 1);
    else if (typeof value === 'object' && value !== null) for (const item of Object.values(value)) visit(item, depth + 1);
  };
  visit(output, 0);
  return urls.map((url) => ({ type: kind, url }));
}

/** The last percentage a tqdm-style progress bar printed in the logs. */
function progressFromLogs(logs: unknown): number | undefined {
  const text = asString(logs);
  if (text === undefined) return undefined;
  const all = [...text.slice(-2_000).matchAll(/(\d{1,3})%\|/g)];
  const last = all[all.length - 1]?.[1];
  return last === undefined ? undefined : upstreamProgress(last);
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const [id = '', kindWord] = upstreamId.split('|');
  const kind = kindWord === 'image' ? 'image' : 'video';
  const answer = await ctx.http.request({ method: 'GET', path: `/v1/predictions/${encodeURIComponent(id)}`, headers: auth(ctx) });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const json = answer.json;
  const word = asString(pick(json, 'status')) ?? '';
  switch (word) {
    case 'starting':
      return { state: 'queued', upstreamWord: word };
    case 'processing': {
      const progress = progressFromLogs(pick(json, 'logs'));
      return progress === undefined ? { state: 'running', upstreamWord: word } : { state: 'running', progress, upstreamWord: word };
    }
    case 'succeeded': {
      if (pick(json, 'data_removed') === true) {
        return {
          state: 'failed',
          error: failure('output_invalid', `Replicate deleted the outputs of prediction ${id} (API predictions are kept one hour)`, '', id),
          upstreamWord: word,
        };
      }
      const outputs = outputsOf(pick(json, 'output'), kind);
      if (outputs.length === 0)
        return { state: 'failed', error: failure('output_invalid', `Replicate prediction ${id} succeeded without an output URL`, '', id), upstreamWord: word };
      const predictTime = positive(pick(json, 'metrics.predict_time'));
      return predictTime === undefined
        ? { state: 'succeeded', outputs, upstreamWord: word }
        : { state: 'succeeded', outputs, upstreamWord: word, reportedUsage: { predict_time_s: predictTime } };
    }
    case 'failed': {
      const error = asString(pick(json, 'error')) ?? 'the prediction failed';
      const message = `Replicate: ${error}`;
      return { state: 'failed', error: POLICY.test(error) ? policyViolation(message, id) : upstreamError(message, id), upstreamWord: word };
    }
    case 'canceled':
      return { state: 'failed', error: upstreamError(`Replicate cancelled prediction ${id}`, id), upstreamWord: word };
    case 'aborted':
      return { state: 'failed', error: upstreamError(`Replicate aborted prediction ${id} before it started (deadline)`, id), upstreamWord: word };
    default:
      return unknownWord(ctx, word, progressFromLogs(pick(json, 'logs')));
  }
}

export const replicateAdapter: ProtocolAdapter = {
  protocol: 'replicate',
  paramMapping: genericParamMapping('replicate'),
  check,
  submit,
  poll,
  async cancel(ctx, upstreamId) {
    const [id = ''] = upstreamId.split('|');
    const answer = await ctx.http.request({ method: 'POST', path: `/v1/predictions/${encodeURIComponent(id)}/cancel`, headers: auth(ctx) });
    if (answer.kind !== 'response') return { outcome: 'transient', reason: answer.reason };
    if (answer.status === 429 || answer.status >= 500) return { outcome: 'transient', reason: `HTTP ${answer.status}` };
    const word = asString(pick(answer.json, 'status'));
    if (answer.status >= 200 && answer.status <= 299 && (word === 'canceled' || word === 'starting' || word === 'processing')) return { outcome: 'cancelled' };
    return { outcome: 'not_cancellable', reason: word ?? `HTTP ${answer.status}` };
  },
  async inputSchema(ctx) {
    // The model's latest version (or the one named) publishes its OpenAPI schema; `Input` is what predictions take.
    const path = parseGenericModel(ctx.upstreamModel).path;
    const [model = '', version] = path.split(':', 2);
    const segments = model.split('/').filter(Boolean);
    if (segments.length !== 2) return { ok: false, reason: 'a bare version id names no model whose schema can be read' };
    const base = `/v1/models/${segments.map(encodeURIComponent).join('/')}`;
    const answer = await ctx.http.request({ method: 'GET', path: version ? `${base}/versions/${encodeURIComponent(version)}` : base, headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status !== 200) return { ok: false, reason: `HTTP ${answer.status}` };
    const openapi = version ? pick(answer.json, 'openapi_schema') : pick(answer.json, 'latest_version.openapi_schema');
    const schema = inputOf(openapi);
    return schema ? { ok: true, schema } : { ok: false, reason: 'the model publishes no input schema' };
  },
  async probe(ctx) {
    const answer = await ctx.http.request({ method: 'GET', path: '/v1/account', headers: auth(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status === 200) return { ok: true, detail: `account ${clip(asString(pick(answer.json, 'username')) ?? '?', 40)}` };
    return { ok: false, reason: `HTTP ${answer.status}` };
  },
};
