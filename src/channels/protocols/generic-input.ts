/**
 * The documented mapping of our resolved parameters onto a generic model-hosting API's free-form
 * `input` (fal queue, Replicate predictions). Those hosts run thousands of models, each with its
 * own input schema; this mapping uses the field names most of their video and image models share
 * (below, one column per host), and a route may rename fields for one model by a query string on
 * its `upstream_model`:
 *
 *   "upstream_model": "fal-ai/kling-video/v2.1/pro/image-to-video?end_image=tail_image_url"
 *
 * renames the field our `end_image` goes to. Only the names change; the values are ours.
 * Parameters no host field can carry are refused, never dropped (see REFUSED).
 */
import { asArray } from '../adapter-kit.js';
import { failure } from '../failure.js';
import { MediaInputError, type ChannelContext, type ChannelJob, type ParamMapping, type SubmitOutcome } from '../protocol.js';

export type GenericHost = 'fal' | 'replicate';

/** Our parameter -> the host's field, per host. */
const FIELDS: Readonly<Record<string, Readonly<Record<GenericHost, string>>>> = {
  prompt: { fal: 'prompt', replicate: 'prompt' },
  negative_prompt: { fal: 'negative_prompt', replicate: 'negative_prompt' },
  image: { fal: 'image_url', replicate: 'image' },
  end_image: { fal: 'end_image_url', replicate: 'end_image' },
  images: { fal: 'image_urls', replicate: 'reference_images' },
  videos: { fal: 'video_urls', replicate: 'reference_videos' },
  audios: { fal: 'audio_urls', replicate: 'reference_audios' },
  audio: { fal: 'audio_url', replicate: 'audio' },
  duration: { fal: 'duration', replicate: 'duration' },
  resolution: { fal: 'resolution', replicate: 'resolution' },
  aspect_ratio: { fal: 'aspect_ratio', replicate: 'aspect_ratio' },
  seed: { fal: 'seed', replicate: 'seed' },
  audio_enable: { fal: 'generate_audio', replicate: 'generate_audio' },
  prompt_extend: { fal: 'enable_prompt_expansion', replicate: 'prompt_extend' },
  // Image models: width and height (also what `size` resolved to), one PNG.
  width: { fal: 'image_size.width', replicate: 'width' },
  height: { fal: 'image_size.height', replicate: 'height' },
  output_format: { fal: 'output_format', replicate: 'output_format' },
  n: { fal: 'num_images', replicate: 'num_outputs' },
};

const MEDIA = new Set(['image', 'end_image', 'audio']);
const MEDIA_LISTS = new Set(['images', 'videos', 'audios']);

/** Parameters no generic field carries: refused when set. */
const REFUSED: Readonly<Record<string, string>> = {
  extra: 'image_options are PixVerse reference tags; no generic field carries them',
};

export function genericParamMapping(host: GenericHost): readonly ParamMapping[] {
  const rows: ParamMapping[] = Object.entries(FIELDS).map(([param, fields]) => ({
    param,
    upstream: `input.${fields[host]}`,
    handling: 'mapped',
    ...(MEDIA.has(param) || MEDIA_LISTS.has(param)
      ? { note: 'https URLs as given; a data URL as our signed URL when the deployment has a public base URL, else as the data URL.' }
      : param === 'seed'
        ? { note: 'Not sent when -1 (video) or 0/null (image): random.' }
        : {}),
  }));
  rows.push({ param: 'size', upstream: 'input width/height', handling: 'mapped', note: 'The catalog resolves size into width and height.' });
  for (const [param, why] of Object.entries(REFUSED)) rows.push({ param, upstream: '', handling: 'refused', note: why });
  return rows;
}

export interface GenericModel {
  /** The model path without the query string. */
  readonly path: string;
  /** Field renames from the query string: our param -> host field. */
  readonly renames: ReadonlyMap<string, string>;
}

export function parseGenericModel(upstreamModel: string): GenericModel {
  const [path = '', query = ''] = upstreamModel.split('?', 2);
  const renames = new Map<string, string>();
  for (const [param, field] of new URLSearchParams(query)) if (field !== '') renames.set(param, field);
  return { path: path.replace(/^\/+|\/+$/g, ''), renames };
}

function setPath(target: Record<string, unknown>, path: string, value: unknown): void {
  const keys = path.split('.');
  let at = target;
  for (const key of keys.slice(0, -1)) {
    const next = at[key];
    if (typeof next === 'object' && next !== null && !Array.isArray(next)) at = next as Record<string, unknown>;
    else at = at[key] = {};
  }
  at[keys[keys.length - 1] ?? path] = value;
}

async function mediaValue(ctx: ChannelContext, value: string): Promise<string> {
  return (await ctx.media.publicUrl(value)) ?? value;
}

export type GenericInput = { ok: true; input: Record<string, unknown> } | { ok: false; outcome: SubmitOutcome };

/** Our resolved parameters -> the host's `input` object, or a refusal naming the parameter. */
export async function genericInput(ctx: ChannelContext, job: ChannelJob, host: GenericHost, model: GenericModel): Promise<GenericInput> {
  const input: Record<string, unknown> = {};
  for (const [param, value] of Object.entries(job.params)) {
    if (param === 'model' || param === 'size' || value === undefined) continue;
    const why = REFUSED[param];
    if (why !== undefined) {
      if (value === null || (typeof value === 'object' && Object.keys(value).length === 0)) continue;
      return {
        ok: false,
        outcome: { outcome: 'rejected', error: failure('unsupported_value', `'${param}' cannot be sent through channel ${ctx.channel}: ${why}`, param) },
      };
    }
    const fields = FIELDS[param];
    if (fields === undefined) {
      return { ok: false, outcome: { outcome: 'rejected', error: failure('unsupported_value', `'${param}' has no mapping on channel ${ctx.channel}`, param) } };
    }
    if (param === 'seed' && (value === -1 || value === null || (job.kind === 'image' && value === 0))) continue;
    if (param === 'prompt_extend' && value === null) continue;
    const field = model.renames.get(param) ?? fields[host];
    try {
      if (MEDIA.has(param) && typeof value === 'string') setPath(input, field, await mediaValue(ctx, value));
      else if (MEDIA_LISTS.has(param)) {
        const items: string[] = [];
        for (const item of asArray(value)) if (typeof item === 'string') items.push(await mediaValue(ctx, item));
        if (items.length > 0) setPath(input, field, items);
      } else setPath(input, field, value);
    } catch (err) {
      if (err instanceof MediaInputError)
        return { ok: false, outcome: { outcome: 'rejected', error: failure('invalid_parameter', err.message, err.param || param) } };
      throw err;
    }
  }
  return { ok: true, input };
}
