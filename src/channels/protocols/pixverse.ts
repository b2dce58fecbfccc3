/**
 * PixVerse Platform API (docs/channels.md#protocol-pixverse; https://docs.platform.pixverse.ai). Images never travel inline: each is
 * uploaded first and the generation names the returned `img_id`. The Upload Image reference
 * (https://docs.platform.pixverse.ai/upload-image-13016631e0) documents one body field, the
 * multipart file `image`; an https input is therefore fetched by us (under the media fetch
 * policy) and uploaded as bytes like a data URL, never passed as an undocumented `image_url`.
 * The endpoint follows the inputs:
 * `images` -> fusion (reference-to-video), `image` + `end_image` -> transition, `image` -> img,
 * none -> text. Every request carries `API-KEY` and a fresh `Ai-trace-id` (a reused one leaves
 * the task generating forever). Business errors come inside HTTP 200 as `ErrCode != 0`.
 * The trace id is not an idempotency key and there is no task search, so a lost generation
 * cannot be reconciled; a lost upload costs nothing and is simply a refusal.
 */
import { Blob } from 'node:buffer';
import { randomUUID } from 'node:crypto';
import { FormData } from 'undici';
import {
  cannotSend,
  asArray,
  asNumber,
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
import { failure } from '../failure.js';
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

export const pixverseParamMapping: readonly ParamMapping[] = [
  {
    param: 'prompt',
    upstream: 'prompt',
    handling: 'mapped',
    note: 'For fusion, a space is added after each `@ref_name` that lacks one (PixVerse requires it).',
  },
  {
    param: 'image',
    upstream: 'upload -> img_id (img endpoint); transition first_frame_img',
    handling: 'mapped',
    note: 'Uploaded as the multipart file `image`; an https value is fetched by us first.',
  },
  {
    param: 'end_image',
    upstream: 'upload -> transition last_frame_img',
    handling: 'mapped',
    note: 'Needs `image`; the Transition reference takes both frames as uploaded image ids (first_frame_img, last_frame_img).',
  },
  {
    param: 'images',
    upstream: 'upload each -> fusion image_references[{type, img_id, ref_name}]',
    handling: 'mapped',
    note: "ref_name defaults to image1..image7 (the catalog's @image1 tags); type defaults to subject.",
  },
  { param: 'extra', upstream: 'image_references[].type / ref_name', handling: 'mapped', note: '`extra.image_options` aligned with `images`.' },
  { param: 'duration', upstream: 'duration', handling: 'mapped', note: 'v6/c1 1-15 s; older models 5 or 8 (checked upstream).' },
  { param: 'resolution', upstream: 'quality', handling: 'mapped', note: 'Lower-case: 360p, 540p, 720p, 1080p.' },
  {
    param: 'aspect_ratio',
    upstream: 'aspect_ratio',
    handling: 'mapped',
    note: 'text and fusion only (required there: 16:9 when the model has no aspect_ratio parameter); img and transition follow the image, so it is refused there.',
  },
  { param: 'seed', upstream: 'seed', handling: 'mapped', note: '-1 (random) is not sent.' },
  { param: 'audio_enable', upstream: 'generate_audio_switch', handling: 'mapped', note: 'Always sent explicitly (false when unset).' },
  {
    param: 'negative_prompt',
    upstream: 'negative_prompt',
    handling: 'mapped',
    note: 'Refused on fusion, whose reference lists no negative prompt.',
  },
  {
    param: 'prompt_extend',
    upstream: '',
    handling: 'refused',
    note: 'No documented equivalent (thinking_type is unverified): true is refused, false is not sent.',
  },
  { param: 'videos', upstream: '', handling: 'refused', note: 'Fusion takes images only.' },
  { param: 'audios', upstream: '', handling: 'refused', note: 'No reference audio upstream.' },
  { param: 'audio', upstream: '', handling: 'refused', note: 'No input audio upstream.' },
];

/** Classification of a non-zero ErrCode; the code table was never published, so messages count too. */
function classify(code: number, message: string): 'channel' | 'busy' | 'policy' | 'not_found' | 'other' {
  if (/api[-_ ]?key|unauthori[sz]ed|authenticat|balance|credit|insufficient/i.test(message) || code === 10005 || code === 500090) return 'channel';
  if (/concurrent|limit|too many|frequen/i.test(message) || code === 500044) return 'busy';
  if (/moderat|sensitive|inappropriate|policy|violat/i.test(message) || code === 500054) return 'policy';
  if (/not (found|exist)/i.test(message) || code === 500030) return 'not_found';
  return 'other';
}

const headers = (ctx: ChannelContext): Record<string, string> => ({ 'API-KEY': ctx.apiKey, 'Ai-trace-id': randomUUID() });

function business(answer: HttpOutcome): { code: number; message: string } | undefined {
  if (answer.kind !== 'response') return undefined;
  const code = asNumber(pick(answer.json, 'ErrCode'));
  if (code === undefined || code === 0) return undefined;
  return { code, message: asString(pick(answer.json, 'ErrMsg')) ?? 'error' };
}

type Upload = { ok: true; imgId: number } | { ok: false; outcome: SubmitOutcome };

async function upload(ctx: ChannelContext, value: string, param: string): Promise<Upload> {
  const form = new FormData();
  try {
    const { bytes, mime } = await ctx.media.bytes(value);
    form.set('image', new Blob([bytes], { type: mime }), `${param.replace(/\W/g, '_')}.${mime.split('/')[1] ?? 'png'}`);
  } catch (err) {
    if (err instanceof MediaInputError) return { ok: false, outcome: { outcome: 'rejected', error: failure('invalid_parameter', clip(err.message), param) } };
    throw err;
  }
  const answer = await ctx.http.request({ method: 'POST', path: '/openapi/v2/image/upload', headers: headers(ctx), form });
  // An upload creates no paid job: a lost answer is as good as a refusal.
  if (answer.kind === 'lost') return { ok: false, outcome: { outcome: 'refused', reason: `image upload lost: ${answer.reason}` } };
  const byClass = submitByHttpClass(answer, (status) => failure('invalid_parameter', `PixVerse refused the upload of '${param}' (HTTP ${status})`, param));
  if (byClass) return { ok: false, outcome: byClass };
  if (answer.kind !== 'response') return { ok: false, outcome: { outcome: 'refused', reason: 'no answer' } };
  const error = business(answer);
  if (error) {
    const kind = classify(error.code, error.message);
    if (kind === 'channel' || kind === 'busy')
      return { ok: false, outcome: { outcome: 'refused', reason: `PixVerse upload ${error.code}: ${clip(error.message)}` } };
    if (kind === 'policy')
      return { ok: false, outcome: { outcome: 'rejected', error: policyViolation(`PixVerse ${error.code}: ${error.message}`, undefined, param) } };
    return {
      ok: false,
      outcome: { outcome: 'rejected', error: failure('invalid_parameter', clip(`PixVerse refused '${param}': ${error.code} ${error.message}`), param) },
    };
  }
  const imgId = asNumber(pick(answer.json, 'Resp.img_id'));
  if (imgId === undefined) return { ok: false, outcome: { outcome: 'refused', reason: 'PixVerse upload answered without Resp.img_id' } };
  return { ok: true, imgId };
}

/** `@name` must be followed by a space in a fusion prompt; add one where it is not. */
export function spaceAfterRefs(prompt: string, names: readonly string[]): string {
  let out = prompt;
  for (const name of names) {
    const escaped = name.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
    out = out.replace(new RegExp(`@${escaped}(?![\\p{L}\\p{N}_])(?! )`, 'gu'), `@${name} `);
  }
  return out;
}

/** The generation endpoint our inputs select. */
function endpointOf(p: ChannelJob['params']): 'text' | 'img' | 'transition' | 'fusion' {
  if (asArray(p['images']).length > 0) return 'fusion';
  if (typeof p['image'] === 'string') return typeof p['end_image'] === 'string' ? 'transition' : 'img';
  return 'text';
}

/** What PixVerse cannot express, without I/O (create time and submit). */
function check(target: TargetSpec, kind: ChannelJob['kind'], p: ChannelJob['params']): ParamProblem | undefined {
  const no = (param: string, why: string): ParamProblem => cannotSend(target, param, why);
  if (kind !== 'video') return no('model', 'the PixVerse protocol generates videos only');
  for (const name of ['videos', 'audios', 'audio'] as const) {
    if (p[name] !== undefined && !(Array.isArray(p[name]) && p[name].length === 0)) return no(name, `PixVerse takes no ${name}`);
  }
  if (p['prompt_extend'] === true) return no('prompt_extend', 'PixVerse documents no prompt expansion switch');
  if (typeof p['end_image'] === 'string' && typeof p['image'] !== 'string') return no('end_image', 'PixVerse transitions need a first frame (`image`) too');
  const endpoint = endpointOf(p);
  if (endpoint === 'fusion' && typeof p['image'] === 'string') return no('image', 'PixVerse fusion takes reference images only, not a first frame');
  if ((endpoint === 'img' || endpoint === 'transition') && p['aspect_ratio'] !== undefined)
    return no('aspect_ratio', "PixVerse image-to-video follows the image's aspect ratio");
  // The Fusion reference lists no negative prompt; text, img and transition requests take one.
  if (endpoint === 'fusion' && typeof p['negative_prompt'] === 'string' && p['negative_prompt'] !== '')
    return no('negative_prompt', 'the PixVerse fusion request has no negative prompt');
  return checkProfile(target.profile, kind, p, `PixVerse model ${target.upstreamModel}`);
}

async function submit(ctx: ChannelContext, job: ChannelJob): Promise<SubmitOutcome> {
  const problem = check(specOf(ctx), job.kind, job.params);
  if (problem) return problemRejection(problem);
  const p = job.params;
  const body: Record<string, unknown> = {
    model: ctx.upstreamModel,
    prompt: typeof p['prompt'] === 'string' ? p['prompt'] : '',
    duration: p['duration'],
    generate_audio_switch: p['audio_enable'] === true,
  };
  if (typeof p['resolution'] === 'string') body['quality'] = p['resolution'].toLowerCase();
  if (typeof p['negative_prompt'] === 'string' && p['negative_prompt'] !== '') body['negative_prompt'] = p['negative_prompt'];
  if (typeof p['seed'] === 'number' && p['seed'] !== -1) body['seed'] = p['seed'];
  const images = asArray(p['images']).filter((v): v is string => typeof v === 'string');
  const endpoint = endpointOf(p);
  // Text-to-video and fusion require aspect_ratio (Text-to-Video generation reference); a model
  // of ours without the parameter (vendord/v6/image-to-video run without an image) gets 16:9.
  if (endpoint === 'text' || endpoint === 'fusion') body['aspect_ratio'] = typeof p['aspect_ratio'] === 'string' ? p['aspect_ratio'] : '16:9';
  if (images.length > 0) {
    const options = asArray(pick(p, 'extra.image_options'));
    const references: Record<string, unknown>[] = [];
    for (const [i, value] of images.entries()) {
      const got = await upload(ctx, value, `images[${i}]`);
      if (!got.ok) return got.outcome;
      const option = asRecord(options[i]);
      references.push({ type: asString(option?.['type']) ?? 'subject', img_id: got.imgId, ref_name: asString(option?.['ref_name']) ?? `image${i + 1}` });
    }
    body['image_references'] = references;
    body['prompt'] = spaceAfterRefs(
      String(body['prompt']),
      references.map((r) => String(r['ref_name'])),
    );
  } else if (typeof p['image'] === 'string') {
    const first = await upload(ctx, p['image'], 'image');
    if (!first.ok) return first.outcome;
    if (typeof p['end_image'] === 'string') {
      const last = await upload(ctx, p['end_image'], 'end_image');
      if (!last.ok) return last.outcome;
      body['first_frame_img'] = first.imgId;
      body['last_frame_img'] = last.imgId;
    } else {
      body['img_id'] = first.imgId;
    }
  }

  const answer = await ctx.http.request({ method: 'POST', path: `/openapi/v2/video/${endpoint}/generate`, headers: headers(ctx), json: body });
  const byClass = submitByHttpClass(answer, (status) => upstreamError(`PixVerse HTTP ${status}`));
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { outcome: 'unknown', reason: 'no answer' };
  const error = business(answer);
  if (error) {
    const text = `PixVerse ${error.code}: ${error.message}`;
    switch (classify(error.code, error.message)) {
      case 'channel':
      case 'busy':
        return { outcome: 'refused', reason: clip(text) };
      case 'policy':
        return { outcome: 'rejected', error: policyViolation(text) };
      default:
        return { outcome: 'rejected', error: upstreamError(text) };
    }
  }
  const id = validUpstreamId(pick(answer.json, 'Resp.video_id'));
  if (id === undefined) return { outcome: 'unknown', reason: 'PixVerse answered ErrCode 0 without Resp.video_id' };
  return { outcome: 'accepted', upstreamId: id };
}

async function poll(ctx: ChannelContext, upstreamId: string): Promise<PollOutcome> {
  const answer = await ctx.http.request({ method: 'GET', path: `/openapi/v2/video/result/${encodeURIComponent(upstreamId)}`, headers: headers(ctx) });
  const byClass = pollByHttpClass(answer);
  if (byClass) return byClass;
  if (answer.kind !== 'response') return { state: 'transient', reason: 'no answer' };
  const error = business(answer);
  if (error) {
    const kind = classify(error.code, error.message);
    if (kind === 'not_found') return { state: 'not_found', upstreamWord: `ErrCode ${error.code}` };
    if (kind === 'busy') return { state: 'throttled' };
    return { state: 'transient', reason: `PixVerse ${error.code}: ${clip(error.message, 80)}` };
  }
  const status = asNumber(pick(answer.json, 'Resp.status'));
  const word = String(status ?? asString(pick(answer.json, 'Resp.status')) ?? '');
  switch (status) {
    case 5:
      // "Generating / waiting": PixVerse does not tell the queue from the run.
      return { state: 'running', upstreamWord: word };
    case 1: {
      const url = asString(pick(answer.json, 'Resp.url'));
      if (url === undefined || url === '')
        return { state: 'failed', error: failure('output_invalid', 'PixVerse reported success (status 1) without a url'), upstreamWord: word };
      return { state: 'succeeded', outputs: [{ type: 'video', url }], upstreamWord: word };
    }
    case 6:
      return { state: 'failed', error: upstreamError('PixVerse deleted the video (status 6)'), upstreamWord: word };
    case 7:
      return { state: 'failed', error: policyViolation('PixVerse content moderation failed (status 7); credits refunded upstream'), upstreamWord: word };
    case 8:
      return { state: 'failed', error: upstreamError('PixVerse generation failed (status 8)'), upstreamWord: word };
    default:
      return unknownWord(ctx, word);
  }
}

export const pixverseAdapter: ProtocolAdapter = {
  protocol: 'pixverse',
  paramMapping: pixverseParamMapping,
  check,
  submit,
  poll,
  async probe(ctx) {
    // No documented cheap read: ask for a video id that cannot exist; only the key is judged.
    const answer = await ctx.http.request({ method: 'GET', path: '/openapi/v2/video/result/0', headers: headers(ctx) });
    if (answer.kind !== 'response') return { ok: false, reason: `${answer.kind}: ${answer.reason}` };
    if (answer.status !== 200) return { ok: false, reason: `HTTP ${answer.status}` };
    const error = business(answer);
    if (error && classify(error.code, error.message) === 'channel') return { ok: false, reason: `PixVerse ${error.code}: ${clip(error.message, 80)}` };
    return { ok: true, detail: 'authenticated' };
  },
};
