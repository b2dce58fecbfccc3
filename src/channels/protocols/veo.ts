/**
 * What the `gemini` and `vertex` protocols share: the Veo `predictLongRunning` request, the
 * long-running operation it returns, Google's RPC error shape, and the parameter mapping.
 *
 * Sources (each rule below names the one it follows):
 * - googleapis/js-genai/src/converters/_models_converters.ts: `generateVideosParametersTo{Mldev,Vertex}`
 *   and `generateVideosConfigTo{Mldev,Vertex}` (the body: `instances[0].{prompt,image,lastFrame,
 *   referenceImages}`, `parameters.{sampleCount,durationSeconds,aspectRatio,resolution,negativePrompt,
 *   enhancePrompt,seed,generateAudio}`; seed and generateAudio are refused in Gemini API mode),
 *   `imageTo{Mldev,Vertex}` (`{bytesBase64Encoded, mimeType}`), `generateVideosOperationFrom*` and
 *   `generateVideosResponseFrom*` (`done`, `error`, `generatedSamples` / `videos`,
 *   `raiMediaFilteredCount`, `raiMediaFilteredReasons`).
 * - https://ai.google.dev/gemini-api/docs/video and
 *   https://cloud.google.com/vertex-ai/generative-ai/docs/model-reference/veo-video-generation
 *   (values, limits, the filtered-sample fields).
 * - https://cloud.google.com/apis/design/errors (`{error:{code,message,status,details}}`,
 *   `google.rpc.RetryInfo.retryDelay` on RESOURCE_EXHAUSTED).
 */
import { asArray, asNumber, asRecord, asString, clip, mediaRejection, pick, policyViolation, upstreamError } from '../adapter-kit.js';
import type { UpstreamFailure } from '../failure.js';
import { MediaInputError, type ChannelContext, type ChannelJob, type HttpOutcome, type ParamMapping } from '../protocol.js';

/** Words Google uses when its Responsible AI filters refuse a prompt, an image or an output. */
export const VEO_POLICY = /responsible ai|rai|safety|usage guidelines|policy|sensitive|prohibited|blocked|celebrity|minor|child/i;

/** A Google RPC error's parts (https://cloud.google.com/apis/design/errors). */
export function rpcError(json: unknown): { code?: number; status?: string; message: string } {
  const error = asRecord(pick(json, 'error'));
  const code = asNumber(error?.['code']);
  const status = asString(error?.['status']);
  return { ...(code === undefined ? {} : { code }), ...(status === undefined ? {} : { status }), message: asString(error?.['message']) ?? '' };
}

/**
 * The Gemini API answers a wrong key with HTTP 400 INVALID_ARGUMENT and an ErrorInfo
 * `reason: "API_KEY_INVALID"` (https://ai.google.dev/gemini-api/docs/troubleshooting): the
 * channel's fault, not the request's, so the submit is refused (fail over), not rejected.
 */
export function keyInvalid(json: unknown): boolean {
  return asArray(pick(json, 'error.details')).some((detail) => asString(pick(detail, 'reason')) === 'API_KEY_INVALID');
}

/** `google.rpc.RetryInfo.retryDelay` ("30s", "1.5s") in ms, when a 429 carries one. */
export function retryInfoMs(json: unknown): number | undefined {
  for (const detail of asArray(pick(json, 'error.details'))) {
    if (!String(asString(pick(detail, '@type')) ?? '').endsWith('google.rpc.RetryInfo')) continue;
    const delay = pick(detail, 'retryDelay');
    const text = asString(delay);
    const seconds = text !== undefined ? Number(text.replace(/s$/, '')) : asNumber(pick(delay, 'seconds'));
    if (seconds !== undefined && Number.isFinite(seconds) && seconds >= 0) return Math.min(seconds * 1000, 3_600_000);
  }
  return undefined;
}

/** Retry-After first (the HTTP rule), else the RPC error's RetryInfo. */
export function retryAfterOf(answer: HttpOutcome): number | undefined {
  if (answer.kind !== 'response') return undefined;
  return answer.retryAfterMs ?? retryInfoMs(answer.json);
}

/** A refused request as a failure: moderation words make it content_policy_violation. */
export function rpcFailure(provider: string, answer: HttpOutcome & { kind: 'response' }): UpstreamFailure {
  const { status, message } = rpcError(answer.json);
  const text = `${provider} ${answer.status}${status ? ` ${status}` : ''}: ${message || 'request refused'}`;
  return VEO_POLICY.test(message) ? policyViolation(text) : upstreamError(text);
}

/** A finished operation's error (`{code, message}`, google.rpc.Status) as a task failure. */
export function operationFailure(provider: string, error: unknown, operation: string): UpstreamFailure {
  const message = asString(pick(error, 'message')) ?? 'the operation failed';
  const code = asNumber(pick(error, 'code'));
  const text = `${provider}: ${clip(message)}${code === undefined ? '' : ` (code ${code})`}`;
  return VEO_POLICY.test(message) ? policyViolation(text, operation) : upstreamError(text, operation);
}

/**
 * A finished operation whose samples were all filtered: Veo reports `raiMediaFilteredCount` and
 * `raiMediaFilteredReasons` instead of videos (generateVideosResponseFrom* in the SDK).
 */
export function filteredFailure(provider: string, response: unknown, operation: string): UpstreamFailure | undefined {
  const count = asNumber(pick(response, 'raiMediaFilteredCount')) ?? 0;
  const reasons = asArray(pick(response, 'raiMediaFilteredReasons'))
    .map((reason) => asString(reason))
    .filter((reason): reason is string => reason !== undefined);
  if (count <= 0 && reasons.length === 0) return undefined;
  return policyViolation(
    `${provider} filtered the output: ${reasons.length > 0 ? reasons.join('; ') : `${count} sample(s) removed by safety filters`}`,
    operation,
  );
}

export interface VeoBodyOptions {
  /** Vertex takes `seed` and `generateAudio`; the Gemini API refuses them (SDK generateVideosConfigToMldev). */
  readonly vertex: boolean;
}

async function inlineImage(ctx: ChannelContext, value: unknown, param: string): Promise<{ bytesBase64Encoded: string; mimeType: string }> {
  if (typeof value !== 'string') throw new MediaInputError(param, `'${param}' must be an image URL or data URL`);
  const { bytes, mime } = await ctx.media.bytes(value);
  return { bytesBase64Encoded: bytes.toString('base64'), mimeType: mime };
}

/**
 * The predictLongRunning body. Images travel inline (`bytesBase64Encoded`): the Gemini API takes
 * no URL at all (imageToMldev refuses gcsUri), and Vertex would need a Cloud Storage URI.
 * One sample per task (`sampleCount: 1`): a task is one video.
 */
export async function veoBody(
  ctx: ChannelContext,
  job: ChannelJob,
  options: VeoBodyOptions,
): Promise<{ ok: true; body: Record<string, unknown> } | { ok: false; outcome: ReturnType<typeof mediaRejection> }> {
  const p = job.params;
  const instance: Record<string, unknown> = { prompt: p['prompt'] };
  const parameters: Record<string, unknown> = { sampleCount: 1 };
  try {
    if (p['image'] !== undefined) instance['image'] = await inlineImage(ctx, p['image'], 'image');
    if (p['end_image'] !== undefined) instance['lastFrame'] = await inlineImage(ctx, p['end_image'], 'end_image');
    const refs = asArray(p['images']);
    if (refs.length > 0) {
      const list: unknown[] = [];
      // referenceType "asset": the subject to keep (VideoGenerationReferenceType in the SDK's types.ts).
      for (let i = 0; i < refs.length; i += 1) list.push({ image: await inlineImage(ctx, refs[i], `images[${i}]`), referenceType: 'asset' });
      instance['referenceImages'] = list;
    }
  } catch (err) {
    if (err instanceof MediaInputError) return { ok: false, outcome: mediaRejection(err.param, err.message) };
    throw err;
  }
  if (typeof p['duration'] === 'number') parameters['durationSeconds'] = p['duration'];
  if (typeof p['resolution'] === 'string') parameters['resolution'] = p['resolution'];
  if (typeof p['aspect_ratio'] === 'string' && p['aspect_ratio'] !== 'adaptive') parameters['aspectRatio'] = p['aspect_ratio'];
  if (typeof p['negative_prompt'] === 'string' && p['negative_prompt'] !== '') parameters['negativePrompt'] = p['negative_prompt'];
  if (typeof p['prompt_extend'] === 'boolean') parameters['enhancePrompt'] = p['prompt_extend'];
  if (options.vertex) {
    if (typeof p['seed'] === 'number' && p['seed'] >= 0) parameters['seed'] = p['seed'];
    if (typeof p['audio_enable'] === 'boolean') parameters['generateAudio'] = p['audio_enable'];
  }
  return { ok: true, body: { instances: [instance], parameters } };
}

/** The documented mapping of our parameters (docs/channels.md tables). */
export function veoParamMapping(vertex: boolean): readonly ParamMapping[] {
  return [
    { param: 'prompt', upstream: 'instances[0].prompt', handling: 'mapped' },
    { param: 'image', upstream: 'instances[0].image.bytesBase64Encoded', handling: 'mapped', note: 'first frame, sent inline' },
    { param: 'end_image', upstream: 'instances[0].lastFrame.bytesBase64Encoded', handling: 'mapped', note: 'last frame, sent inline' },
    { param: 'images', upstream: 'instances[0].referenceImages[].image', handling: 'mapped', note: 'referenceType "asset", at most 3, 8 s only' },
    { param: 'duration', upstream: 'parameters.durationSeconds', handling: 'mapped', note: '4, 6 or 8' },
    { param: 'resolution', upstream: 'parameters.resolution', handling: 'mapped', note: '720p; 1080p and 4k with 8 s' },
    { param: 'aspect_ratio', upstream: 'parameters.aspectRatio', handling: 'mapped', note: '16:9 or 9:16; adaptive is not sent' },
    { param: 'negative_prompt', upstream: 'parameters.negativePrompt', handling: 'mapped' },
    { param: 'prompt_extend', upstream: 'parameters.enhancePrompt', handling: 'mapped' },
    vertex
      ? { param: 'seed', upstream: 'parameters.seed', handling: 'mapped', note: '0..4294967295; -1 is not sent' }
      : { param: 'seed', upstream: '', handling: 'refused', note: 'the Gemini API takes no seed (js-genai generateVideosConfigToMldev); -1 is accepted' },
    vertex
      ? { param: 'audio_enable', upstream: 'parameters.generateAudio', handling: 'mapped' }
      : { param: 'audio_enable', upstream: '', handling: 'refused', note: 'Veo 3.1 on the Gemini API always makes sound; true is accepted' },
    { param: 'videos', upstream: '', handling: 'refused', note: 'extension takes only a Veo-made video' },
    { param: 'audios', upstream: '', handling: 'refused' },
    { param: 'audio', upstream: '', handling: 'refused' },
    { param: 'extra', upstream: '', handling: 'refused' },
    { param: 'size', upstream: '', handling: 'refused', note: 'Veo makes video only' },
    { param: 'width', upstream: '', handling: 'refused', note: 'Veo makes video only' },
    { param: 'height', upstream: '', handling: 'refused', note: 'Veo makes video only' },
    { param: 'n', upstream: 'parameters.sampleCount', handling: 'ignored', note: 'always 1: a task is one video' },
    { param: 'output_format', upstream: '', handling: 'ignored', note: 'Veo makes MP4' },
  ];
}
