import { isRecord, type Reply, type TaskPlan } from './upstream-kit.js';

/**
 * What the Gemini API and Vertex AI fakes share: Google's RPC error answer
 * (https://cloud.google.com/apis/design/errors: `{error:{code, message, status, details}}`),
 * the Veo request checks both services make, and the Responsible AI texts.
 */

export function rpc(status: number, word: string, message: string, details?: readonly unknown[]): Reply {
  return { status, json: { error: { code: status, message, status: word, ...(details ? { details } : {}) } } };
}

/** 429 RESOURCE_EXHAUSTED with a RetryInfo detail, as Google's quota answers carry one. */
export function exhausted(retryDelayS?: number): Reply {
  const details = retryDelayS === undefined ? undefined : [{ '@type': 'type.googleapis.com/google.rpc.RetryInfo', retryDelay: `${retryDelayS}s` }];
  return rpc(429, 'RESOURCE_EXHAUSTED', 'Resource has been exhausted (e.g. check quota).', details);
}

export const RAI_PROMPT_REFUSAL =
  "The prompt could not be submitted. This prompt contains sensitive words that violate Google's Responsible AI practices. Try rephrasing the prompt.";
export const RAI_OUTPUT_REASON = "The video could not be generated because it may violate Google's Responsible AI practices (support code 29310472).";

/** Parameters each service knows (js-genai generateVideosConfigTo{Mldev,Vertex}); anything else is refused. */
const COMMON_PARAMETERS = ['sampleCount', 'durationSeconds', 'aspectRatio', 'resolution', 'personGeneration', 'negativePrompt', 'enhancePrompt'];
const VERTEX_ONLY = ['storageUri', 'fps', 'seed', 'pubsubTopic', 'generateAudio', 'compressionQuality', 'resizeMode'];

/**
 * The Veo 3.1 request checks of https://ai.google.dev/gemini-api/docs/video and the Vertex AI
 * Veo reference: one instance with a prompt, inline images `{bytesBase64Encoded, mimeType}`,
 * 4/6/8 s, 16:9 or 9:16, 720p/1080p/4k (1080p, 4k and reference images only at 8 s), at most
 * three reference images, a last frame only with a first frame. Returns the refusal message.
 */
export function veoRefusal(body: unknown, vertex: boolean): string | undefined {
  if (!isRecord(body) || !Array.isArray(body['instances']) || body['instances'].length !== 1) return 'instances must hold exactly one instance';
  const instance: unknown = body['instances'][0];
  const parameters: unknown = body['parameters'] ?? {};
  if (!isRecord(instance) || !isRecord(parameters)) return 'instances[0] and parameters must be objects';
  if (typeof instance['prompt'] !== 'string' || instance['prompt'] === '') return 'instances[0].prompt is required';
  for (const key of Object.keys(parameters)) {
    if (COMMON_PARAMETERS.includes(key)) continue;
    if (VERTEX_ONLY.includes(key)) {
      if (!vertex) return `Invalid JSON payload received. Unknown name "${key}" at 'parameters': ${key} isn't supported by this model.`;
      continue;
    }
    return `Invalid JSON payload received. Unknown name "${key}" at 'parameters': Cannot find field.`;
  }
  for (const key of ['image', 'lastFrame']) {
    const image = instance[key];
    if (image === undefined) continue;
    if (!isRecord(image) || typeof image['bytesBase64Encoded'] !== 'string' || typeof image['mimeType'] !== 'string')
      return `instances[0].${key} needs bytesBase64Encoded and mimeType`;
  }
  if (instance['lastFrame'] !== undefined && instance['image'] === undefined) return 'lastFrame requires image';
  const refs = instance['referenceImages'];
  const refCount = Array.isArray(refs) ? refs.length : 0;
  if (
    refs !== undefined &&
    (!Array.isArray(refs) || refs.length > 3 || !refs.every((r) => isRecord(r) && isRecord(r['image']) && r['referenceType'] === 'asset'))
  )
    return 'referenceImages: at most 3 {image, referenceType: "asset"}';
  const duration = parameters['durationSeconds'] ?? 8;
  if (![4, 6, 8].includes(duration as number)) return `durationSeconds must be 4, 6 or 8; got ${JSON.stringify(duration)}`;
  const resolution = parameters['resolution'] ?? '720p';
  if (!['720p', '1080p', '4k'].includes(resolution as string)) return `resolution must be 720p, 1080p or 4k`;
  if (resolution !== '720p' && duration !== 8) return `${resolution as string} requires durationSeconds 8`;
  if (refCount > 0 && duration !== 8) return 'referenceImages require durationSeconds 8';
  if (parameters['aspectRatio'] !== undefined && !['16:9', '9:16'].includes(parameters['aspectRatio'] as string)) return 'aspectRatio must be 16:9 or 9:16';
  if (
    parameters['sampleCount'] !== undefined &&
    parameters['sampleCount'] !== 1 &&
    !(typeof parameters['sampleCount'] === 'number' && parameters['sampleCount'] <= 4)
  )
    return 'sampleCount must be 1 to 4';
  const seed = parameters['seed'];
  if (seed !== undefined && !(typeof seed === 'number' && Number.isInteger(seed) && seed >= 0 && seed <= 4294967295)) return 'seed must be 0..4294967295';
  if (parameters['generateAudio'] !== undefined && typeof parameters['generateAudio'] !== 'boolean') return 'generateAudio must be a boolean';
  return undefined;
}

/** A plan's early refusal as the service answers it; undefined when the plan is accepted. */
export function planRefusal(plan: TaskPlan): Reply | undefined {
  switch (plan.refuse) {
    case 'moderation':
      return rpc(400, 'INVALID_ARGUMENT', RAI_PROMPT_REFUSAL);
    case 'invalid':
      return rpc(400, 'INVALID_ARGUMENT', 'durationSeconds must be 4, 6 or 8; got 5');
    case 'rate-limit':
      return exhausted(7);
    case 'quota':
      return exhausted();
    case 'none':
      return undefined;
  }
}
