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
 *
 * A model with a target profile (profiles.ts: built in for the documented examples, or declared
 * in the channels file) is not mapped by these names at all: its input is exactly the profile's
 * fields, with the profile's types and allowed values (fal's Kling takes `duration` as the
 * string "5" or "10"; Replicate's flux-schnell takes an aspect ratio, not width and height).
 */
import { asArray } from '../adapter-kit.js';
import { failure } from '../failure.js';
import { checkProfile, planInputs, type ParamProblem, type TargetProfile } from '../profiles.js';
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

/** Our parameter -> the host's field, without a profile (for the schema probe). */
export function genericFields(host: GenericHost): Record<string, string> {
  return Object.fromEntries(Object.entries(FIELDS).map(([param, fields]) => [param, fields[host]]));
}

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

const rejectedFor = (problem: ParamProblem): GenericInput => ({
  ok: false,
  outcome: { outcome: 'rejected', error: failure('unsupported_value', problem.message, problem.param) },
});

/** What a target cannot take, before any request: the profile's check, or the generic refusals. */
export function genericCheck(
  profile: TargetProfile | undefined,
  kind: ChannelJob['kind'],
  params: ChannelJob['params'],
  target: string,
): ParamProblem | undefined {
  if (profile) return checkProfile(profile, kind, params, target);
  for (const [param, value] of Object.entries(params)) {
    const why = REFUSED[param];
    if (why === undefined || value === undefined || value === null || (typeof value === 'object' && Object.keys(value).length === 0)) continue;
    return { param, message: `'${param}' cannot be sent to ${target}: ${why}` };
  }
  return undefined;
}

async function placed(ctx: ChannelContext, input: Record<string, unknown>, field: string, value: unknown, media: 'one' | 'list' | undefined): Promise<void> {
  if (media === 'one' && typeof value === 'string') setPath(input, field, await mediaValue(ctx, value));
  else if (media === 'list') {
    const items: string[] = [];
    for (const item of asArray(value)) if (typeof item === 'string') items.push(await mediaValue(ctx, item));
    if (items.length > 0) setPath(input, field, items);
  } else setPath(input, field, value);
}

/**
 * Our resolved parameters -> the host's `input` object, or a refusal naming the parameter. With
 * a profile (built in or declared) the input is exactly the profile's fields, typed as it says;
 * without one, the generic field names above.
 */
export async function genericInput(ctx: ChannelContext, job: ChannelJob, host: GenericHost, model: GenericModel): Promise<GenericInput> {
  const target = `${host} model ${model.path}`;
  const input: Record<string, unknown> = {};
  try {
    if (ctx.profile) {
      const plan = planInputs(ctx.profile, job.kind, job.params, target);
      if (!plan.ok) return rejectedFor(plan.problem);
      for (const item of plan.inputs) await placed(ctx, input, model.renames.get(item.param) ?? item.field, item.value, item.media);
      return { ok: true, input };
    }
    const refused = genericCheck(undefined, job.kind, job.params, `channel ${ctx.channel}`);
    if (refused) return rejectedFor(refused);
    for (const [param, value] of Object.entries(job.params)) {
      if (param === 'model' || param === 'size' || value === undefined || REFUSED[param] !== undefined) continue;
      if (param === 'seed' && (value === -1 || value === null || (job.kind === 'image' && value === 0))) continue;
      if (param === 'prompt_extend' && value === null) continue;
      const media = MEDIA.has(param) ? 'one' : MEDIA_LISTS.has(param) ? 'list' : undefined;
      // A parameter with no meaning here (a declared model's own, docs/guides/models.md) travels under its own name.
      await placed(ctx, input, model.renames.get(param) ?? FIELDS[param]?.[host] ?? param, value, media);
    }
  } catch (err) {
    if (err instanceof MediaInputError) return { ok: false, outcome: { outcome: 'rejected', error: failure('invalid_parameter', err.message, err.param) } };
    throw err;
  }
  return { ok: true, input };
}
