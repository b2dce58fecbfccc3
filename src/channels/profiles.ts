/**
 * Target profiles: what one upstream model takes, as a checked mapping of our parameters onto
 * its inputs. A protocol adapter knows the protocol (endpoints, status words, errors); it cannot
 * know every model a host runs. A profile says, per parameter of ours, the upstream field, the
 * value type (an integer, or the string enum "5"/"10"), the allowed values, or that the target
 * cannot express it (refused, unless the value is one the target does anyway).
 *
 * Where the profiles come from:
 * - built in (BUILT_IN below), for the upstream models the documentation uses as examples and
 *   the ones the catalog's models correspond to, each citing the provider's public page;
 * - declared by the operator on a route target (`"profile": {...}` in the channels file,
 *   parsed by `parseProfile`, every fault with its JSON path).
 *
 * How they are used:
 * - at create, for the route's first target (docs/channels.md "Target profiles"): a parameter
 *   the target cannot express is a 400 `unsupported_value` naming it, before any upstream call;
 * - at submit, for every target (failover included), by the adapter: the same check, then for
 *   the generic hosts (fal, Replicate) the profile *is* the input: only its fields are sent.
 *
 * Glossary
 * - closed profile: every parameter it does not name is refused when set to a value that means
 *   something (generic hosts: the input is built from the profile alone). An open profile only
 *   adds constraints to what the protocol adapter builds (DashScope, Ark, MiniMax, PixVerse).
 * - accept: values of a refused parameter that the target does anyway (a seed of -1 where the
 *   upstream has no seed: random is what it does); accepted and not sent.
 */
import type { ModelKind, ResolvedParams } from '../catalog/index.js';
import type { ProtocolName } from './names.js';
import { GOOGLE_PROFILES } from './profiles-google.js';
import { KLING_PROFILES } from './profiles-kling.js';
import { LUMA_PROFILES } from './profiles-luma.js';
import { RUNWAY_PROFILES } from './profiles-runway.js';
import { XAI_PROFILES } from './profiles-xai.js';

export type Scalar = string | number | boolean | null;

/** How a value travels: `string` turns 5 into "5" (fal's Kling durations), `media` is a URL input. */
export type ValueType = 'string' | 'integer' | 'number' | 'boolean' | 'media' | 'media[]';

export interface InputRule {
  /** The upstream field (a dotted path in the input); informational for open profiles. */
  readonly field: string;
  readonly type?: ValueType;
  /** Our value (as text) -> the upstream's value, applied before the type (720p -> "standard"). */
  readonly map?: Readonly<Record<string, Scalar>>;
  /** Allowed values, after map and type. */
  readonly values?: readonly Scalar[];
  readonly min?: number;
  readonly max?: number;
  /** Our values that are not sent: the upstream's own default or "random". */
  readonly omit?: readonly Scalar[];
  readonly note?: string;
}

export interface ParamRefusal {
  /** Why the target cannot take the parameter (shown in the 400 message). */
  readonly refuse: string;
  readonly accept?: readonly Scalar[];
}

export type ParamRule = InputRule | ParamRefusal;

/** A size given as width and height, sent as the nearest of the target's aspect ratios (documented rule). */
export interface SizeToAspectRatio {
  readonly field: string;
  readonly values: readonly string[];
}

export interface TargetProfile {
  readonly protocol: ProtocolName;
  /** The upstream model (path without any `?rename=` query). */
  readonly model: string;
  /** The provider's public documentation of the model's inputs. */
  readonly source: string;
  readonly closed: boolean;
  readonly params: Readonly<Record<string, ParamRule>>;
  /** Image targets: width and height travel as an aspect ratio. */
  readonly sizeToAspectRatio?: SizeToAspectRatio;
  /** Image targets: width x height must lie in this range of total pixels. */
  readonly pixels?: { readonly min: number; readonly max: number };
  /** Image targets: width / height must lie in this range. */
  readonly ratio?: { readonly min: number; readonly max: number };
  /** Constant inputs the target needs (generic hosts only). */
  readonly fixed?: Readonly<Record<string, Scalar>>;
  /** True for a profile from the channels file. */
  readonly declared?: boolean;
  /** What the model makes (built-in profiles: the docs list which catalog defaults it cannot take). */
  readonly kind?: ModelKind;
  /** A rule across parameters that the per-parameter rules cannot say (built-in profiles only). */
  readonly across?: (params: ResolvedParams, target: string) => ParamProblem | undefined;
}

export const isRefusal = (rule: ParamRule): rule is ParamRefusal => 'refuse' in rule;

/** One parameter the target cannot take: the create's 400, or the submit's `rejected`. */
export interface ParamProblem {
  readonly param: string;
  readonly message: string;
}

/** One input to send: the upstream field and the value (media still to be turned into URLs). */
export interface PlannedInput {
  readonly param: string;
  readonly field: string;
  readonly value: unknown;
  readonly media?: 'one' | 'list';
}

export type Plan = { readonly ok: true; readonly inputs: readonly PlannedInput[] } | { readonly ok: false; readonly problem: ParamProblem };

/** Values that mean "nothing asked": never a reason to refuse. */
function neutral(param: string, value: unknown, kind: ModelKind): boolean {
  if (value === undefined || value === null || value === '') return true;
  if (Array.isArray(value)) return value.length === 0;
  if (typeof value === 'object') return Object.keys(value).length === 0;
  if (param === 'seed') return value === -1 || (kind === 'image' && value === 0);
  // The catalog derives these for every image task; a target that has no such field makes one PNG anyway.
  if (param === 'output_format') return value === 'png';
  if (param === 'n') return value === 1;
  return false;
}

const show = (value: unknown): string => (typeof value === 'string' ? `'${value}'` : JSON.stringify(value));
const list = (values: readonly Scalar[]): string => values.map(show).join(', ');

/** Our value, mapped and typed as the rule says; a problem when it cannot be. */
function convert(param: string, value: unknown, rule: InputRule, target: string): { value: unknown } | ParamProblem {
  let out: unknown = value;
  if (rule.map !== undefined && (typeof value === 'string' || typeof value === 'number' || typeof value === 'boolean')) {
    const mapped = rule.map[String(value)];
    if (mapped === undefined) return { param, message: `'${param}' ${show(value)} is not available on ${target}; it takes ${list(Object.keys(rule.map))}.` };
    out = mapped;
  }
  switch (rule.type) {
    case 'string':
      if (typeof out === 'number' || typeof out === 'boolean') out = String(out);
      break;
    case 'integer':
      if (typeof out !== 'number' || !Number.isInteger(out)) return { param, message: `'${param}' must be an integer on ${target}.` };
      break;
    case 'number':
      if (typeof out !== 'number') return { param, message: `'${param}' must be a number on ${target}.` };
      break;
    default:
      break;
  }
  if (rule.values !== undefined && !rule.values.some((allowed) => allowed === out))
    return { param, message: `'${param}' ${show(value)} is not available on ${target}; it takes ${list(rule.values)}.` };
  if (typeof out === 'number' && ((rule.min !== undefined && out < rule.min) || (rule.max !== undefined && out > rule.max)))
    return { param, message: `'${param}' ${show(value)} is out of range on ${target} (${rule.min ?? '-inf'} to ${rule.max ?? 'inf'}).` };
  return { value: out };
}

/** The aspect ratio of `values` nearest to width/height (by the ratio's logarithm: 2:1 and 1:2 are as far from 1:1). */
export function nearestAspectRatio(width: number, height: number, values: readonly string[]): string | undefined {
  let best: string | undefined;
  let distance = Number.POSITIVE_INFINITY;
  for (const value of values) {
    const [w, h] = value.split(':').map(Number);
    if (!w || !h) continue;
    const d = Math.abs(Math.log(width / height) - Math.log(w / h));
    if (d < distance) [best, distance] = [value, d];
  }
  return best;
}

function sizeProblems(profile: TargetProfile, params: ResolvedParams, target: string): ParamProblem | undefined {
  const width = params['width'];
  const height = params['height'];
  if (typeof width !== 'number' || typeof height !== 'number') return undefined;
  const param = params['size'] !== undefined ? 'size' : 'width';
  const { pixels, ratio } = profile;
  if (pixels && (width * height < pixels.min || width * height > pixels.max)) {
    return {
      param,
      message: `${width}x${height} is ${width * height} pixels; ${target} renders ${pixels.min} to ${pixels.max} pixels in total (for example ${Math.ceil(Math.sqrt(pixels.min))}x${Math.ceil(Math.sqrt(pixels.min))}).`,
    };
  }
  if (ratio && (width / height < ratio.min || width / height > ratio.max)) {
    return { param, message: `${width}x${height} has an aspect ratio of ${(width / height).toFixed(3)}; ${target} takes ${ratio.min} to ${ratio.max}.` };
  }
  return undefined;
}

/**
 * Checks the resolved parameters against a profile and, for a closed profile, plans the input.
 * `target` names the target in messages (`fal model fal-ai/...`).
 */
export function planInputs(profile: TargetProfile, kind: ModelKind, params: ResolvedParams, target: string): Plan {
  const inputs: PlannedInput[] = [];
  const fail = (problem: ParamProblem): Plan => ({ ok: false, problem });
  const sized = sizeProblems(profile, params, target) ?? profile.across?.(params, target);
  if (sized) return fail(sized);
  for (const [param, value] of Object.entries(params)) {
    if (param === 'model' || value === undefined) continue;
    // width and height travel as `size` rules or the aspect-ratio rule; `size` itself is their source.
    if (param === 'size') continue;
    if ((param === 'width' || param === 'height') && profile.sizeToAspectRatio) continue;
    const rule = profile.params[param];
    if (rule === undefined) {
      if (!profile.closed || neutral(param, value, kind)) continue;
      return fail({ param, message: `'${param}' cannot be sent to ${target}: the model has no such input.` });
    }
    if (isRefusal(rule)) {
      if (neutral(param, value, kind) || (rule.accept ?? []).some((accepted) => accepted === value)) continue;
      return fail({ param, message: `'${param}' ${show(value)} cannot be sent to ${target}: ${rule.refuse}` });
    }
    if ((rule.omit ?? []).some((omitted) => omitted === value) || value === null) continue;
    if (rule.type === 'media' || rule.type === 'media[]') {
      if (Array.isArray(value) && value.length === 0) continue;
      inputs.push({ param, field: rule.field, value, media: rule.type === 'media' ? 'one' : 'list' });
      continue;
    }
    const converted = convert(param, value, rule, target);
    if ('param' in converted) return fail(converted);
    inputs.push({ param, field: rule.field, value: converted.value });
  }
  if (profile.sizeToAspectRatio && typeof params['width'] === 'number' && typeof params['height'] === 'number') {
    const ratio = nearestAspectRatio(params['width'], params['height'], profile.sizeToAspectRatio.values);
    if (ratio !== undefined) inputs.push({ param: 'size', field: profile.sizeToAspectRatio.field, value: ratio });
  }
  for (const [field, value] of Object.entries(profile.fixed ?? {})) inputs.push({ param: '', field, value });
  return { ok: true, inputs };
}

// ---------------------------------------------------------------------------------------------
// Built-in profiles
// ---------------------------------------------------------------------------------------------

const refuse = (why: string, ...accept: Scalar[]): ParamRefusal => (accept.length > 0 ? { refuse: why, accept } : { refuse: why });
const media = (field: string): InputRule => ({ field, type: 'media' });
const text = (field: string): InputRule => ({ field, type: 'string' });

/** Wan video on DashScope: seeds are 0..2147483647; -1 (random) is not sent. */
const WAN_SEED: InputRule = { field: 'parameters.seed', type: 'integer', min: 0, max: 2147483647, omit: [-1] };
/**
 * Wan 2.7 has no `parameters.audio` (its image-to-video and text-to-video references list none)
 * and its output always has sound: the driving audio, or a soundtrack it makes.
 */
const WAN_NO_AUDIO_SWITCH = refuse('Wan 2.7 has no audio switch (no parameters.audio): its output always has sound.', true);

const FLUX_RATIOS = ['1:1', '16:9', '21:9', '3:2', '2:3', '4:5', '5:4', '3:4', '4:3', '9:16', '9:21'];
const SEEDANCE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '21:9', 'adaptive'];
const SEEDANCE_SEED: InputRule = { field: 'seed', type: 'integer', min: -1, max: 4294967295 };
const PIXVERSE_RATIOS = ['16:9', '4:3', '1:1', '3:4', '9:16', '2:3', '3:2', '21:9'];

const KLING_FAL_COMMON = {
  prompt: text('prompt'),
  image: media('image_url'),
  negative_prompt: text('negative_prompt'),
  duration: { field: 'duration', type: 'string', values: ['5', '10'] },
  seed: refuse('Kling on fal has no seed input.'),
  aspect_ratio: refuse('image-to-video follows the input image.', 'adaptive'),
  audio_enable: refuse('Kling 2.1 makes silent video.', false),
  prompt_extend: refuse('Kling 2.1 has no prompt expansion switch.', false),
} as const satisfies Record<string, ParamRule>;

export const BUILT_IN: readonly TargetProfile[] = [
  // fal ---------------------------------------------------------------------------------------
  {
    protocol: 'fal',
    model: 'fal-ai/kling-video/v2.1/pro/image-to-video',
    source: 'https://fal.ai/models/fal-ai/kling-video/v2.1/pro/image-to-video/api',
    closed: true,
    params: {
      ...KLING_FAL_COMMON,
      end_image: media('tail_image_url'),
      resolution: refuse('Kling 2.1 Pro renders 1080p.', '1080p'),
    },
  },
  {
    protocol: 'fal',
    model: 'fal-ai/kling-video/v2.1/standard/image-to-video',
    source: 'https://fal.ai/models/fal-ai/kling-video/v2.1/standard/image-to-video/api',
    closed: true,
    params: { ...KLING_FAL_COMMON, resolution: refuse('Kling 2.1 Standard renders 720p.', '720p') },
  },
  {
    protocol: 'fal',
    model: 'fal-ai/flux/dev',
    kind: 'image',
    source: 'https://fal.ai/models/fal-ai/flux/dev/api',
    closed: true,
    params: {
      prompt: text('prompt'),
      width: { field: 'image_size.width', type: 'integer' },
      height: { field: 'image_size.height', type: 'integer' },
      seed: { field: 'seed', type: 'integer', omit: [0] },
      n: { field: 'num_images', type: 'integer', min: 1, max: 4 },
      output_format: { field: 'output_format', type: 'string', values: ['png'] },
      prompt_extend: refuse('FLUX.1 [dev] has no prompt expansion.', false),
    },
  },
  // Replicate ---------------------------------------------------------------------------------
  {
    protocol: 'replicate',
    model: 'black-forest-labs/flux-schnell',
    kind: 'image',
    source: 'https://replicate.com/black-forest-labs/flux-schnell/api/schema',
    closed: true,
    params: {
      prompt: text('prompt'),
      seed: { field: 'seed', type: 'integer', omit: [0] },
      n: { field: 'num_outputs', type: 'integer', min: 1, max: 4 },
      output_format: { field: 'output_format', type: 'string', values: ['png'] },
      prompt_extend: refuse('FLUX.1 [schnell] has no prompt expansion.', false),
    },
    // flux-schnell takes no width or height: a size becomes the nearest of its aspect ratios (about 1 megapixel).
    sizeToAspectRatio: { field: 'aspect_ratio', values: FLUX_RATIOS },
  },
  {
    protocol: 'replicate',
    model: 'kwaivgi/kling-v2.1',
    source: 'https://replicate.com/kwaivgi/kling-v2.1/api/schema',
    closed: true,
    params: {
      prompt: text('prompt'),
      image: media('start_image'),
      end_image: { field: 'end_image', type: 'media', note: 'only with `1080p` (the schema: end_image requires mode pro)' },
      negative_prompt: text('negative_prompt'),
      duration: { field: 'duration', type: 'integer', values: [5, 10] },
      // Kling v2.1 on Replicate: mode standard renders 720p, pro 1080p.
      resolution: { field: 'mode', map: { '720p': 'standard', '1080p': 'pro' } },
      seed: refuse('kling-v2.1 has no seed input.'),
      aspect_ratio: refuse('image-to-video follows the start image.', 'adaptive'),
      audio_enable: refuse('Kling 2.1 makes silent video.', false),
      prompt_extend: refuse('Kling 2.1 has no prompt expansion switch.', false),
    },
    // The schema: end_image "requires mode pro", which is our 1080p.
    across: (params, target) =>
      typeof params['end_image'] === 'string' && params['resolution'] !== '1080p'
        ? { param: 'end_image', message: `'end_image' needs 1080p (mode pro) on ${target}; ask for "resolution": "1080p".` }
        : undefined,
  },
  // DashScope (open: the adapter builds the body) ---------------------------------------------
  {
    protocol: 'dashscope',
    model: 'wan2.7-i2v',
    source: 'https://www.alibabacloud.com/help/en/model-studio/image-to-video-general-api-reference',
    closed: false,
    params: {
      resolution: { field: 'parameters.resolution', values: ['720p', '1080p'] },
      duration: { field: 'parameters.duration', type: 'integer', min: 2, max: 15 },
      seed: WAN_SEED,
      audio_enable: WAN_NO_AUDIO_SWITCH,
      aspect_ratio: refuse('wan2.7-i2v follows the first frame.', 'adaptive'),
    },
  },
  {
    protocol: 'dashscope',
    model: 'wan2.7-t2v',
    source: 'https://www.alibabacloud.com/help/en/model-studio/text-to-video-api-reference',
    closed: false,
    params: {
      resolution: { field: 'parameters.resolution', values: ['480p', '720p', '1080p'] },
      duration: { field: 'parameters.duration', type: 'integer', min: 2, max: 15 },
      aspect_ratio: { field: 'parameters.ratio', values: ['16:9', '9:16', '1:1', '4:3', '3:4'], omit: ['adaptive'] },
      seed: WAN_SEED,
      audio_enable: WAN_NO_AUDIO_SWITCH,
    },
  },
  ...['wan3.0-video', 'wan3.0-video-prime'].map((model): TargetProfile => ({
    protocol: 'dashscope',
    model,
    source: 'https://www.alibabacloud.com/help/en/model-studio/wan3-video-generation-api-reference',
    closed: false,
    params: {
      resolution: { field: 'parameters.resolution', values: ['480p', '720p', '1080p'] },
      duration: { field: 'parameters.duration', type: 'integer', min: 2, max: 30 },
      seed: WAN_SEED,
      negative_prompt: refuse('Wan 3.0 removed the negative prompt.'),
      prompt_extend: refuse('Wan 3.0 removed prompt extension.', false),
    },
  })),
  {
    protocol: 'dashscope',
    model: 'wan2.6-t2i',
    kind: 'image',
    source: 'https://www.alibabacloud.com/help/en/model-studio/wan-image-generation-api-reference',
    closed: false,
    params: { seed: { field: 'parameters.seed', type: 'integer', min: 0, max: 2147483647 } },
    // Total pixels between 1280*1280 and 1440*1440, aspect ratio 1:4 to 4:1.
    pixels: { min: 1280 * 1280, max: 1440 * 1440 },
    ratio: { min: 0.25, max: 4 },
  },
  // Ark (Seedance) ----------------------------------------------------------------------------
  ...['dreamina-seedance-2-0-260128', 'doubao-seedance-2-0-260128'].map((model): TargetProfile => ({
    protocol: 'ark',
    model,
    source: 'https://docs.byteplus.com/en/docs/ModelArk/1520757',
    closed: false,
    params: {
      resolution: { field: 'resolution', values: ['480p', '720p', '1080p'] },
      duration: { field: 'duration', type: 'integer', min: 4, max: 15 },
      aspect_ratio: { field: 'ratio', values: SEEDANCE_RATIOS },
      seed: SEEDANCE_SEED,
    },
  })),
  ...['seedance-2.0-mini', 'doubao-seedance-2-0-fast-260128'].map((model): TargetProfile => ({
    protocol: 'ark',
    model,
    source: 'https://docs.byteplus.com/en/docs/ModelArk/1520757',
    closed: false,
    params: {
      resolution: { field: 'resolution', values: ['480p', '720p'] },
      duration: { field: 'duration', type: 'integer', min: 4, max: 15 },
      aspect_ratio: { field: 'ratio', values: SEEDANCE_RATIOS },
      seed: SEEDANCE_SEED,
    },
  })),
  // MiniMax -----------------------------------------------------------------------------------
  {
    protocol: 'minimax',
    model: 'MiniMax-H3',
    source: 'https://platform.minimax.io/docs/api-reference/video-generation-v2-create',
    closed: false,
    params: {
      resolution: { field: 'resolution', values: ['768p', '2k'], map: { '768p': '768p', '2k': '2k', '2K': '2k' } },
      duration: { field: 'duration', type: 'integer', min: 4, max: 15 },
    },
  },
  {
    protocol: 'minimax',
    model: 'MiniMax-H3-Max',
    source: 'https://platform.minimax.io/docs/api-reference/video-generation-v2-create',
    closed: false,
    params: {
      resolution: { field: 'resolution', values: ['480p', '768p'] },
      duration: { field: 'duration', type: 'integer', min: 5, max: 15 },
    },
  },
  // PixVerse ----------------------------------------------------------------------------------
  ...['v6', 'c1'].map((model): TargetProfile => ({
    protocol: 'pixverse',
    model,
    source: 'https://docs.platform.pixverse.ai/text-to-video-generation-13016634e0',
    closed: false,
    params: {
      resolution: { field: 'quality', values: ['360p', '540p', '720p', '1080p'] },
      duration: { field: 'duration', type: 'integer', min: 1, max: 15 },
      aspect_ratio: { field: 'aspect_ratio', values: PIXVERSE_RATIOS },
      seed: { field: 'seed', type: 'integer', min: 0, max: 2147483647, omit: [-1] },
    },
  })), // Gemini API and Vertex AI (Veo 3.1): profiles-google.ts ------------------------------------
  ...GOOGLE_PROFILES,
  // Kling, Runway, Luma, xAI: profiles-<vendor>.ts -------------------------------------------------
  ...KLING_PROFILES,
  ...RUNWAY_PROFILES,
  ...LUMA_PROFILES,
  ...XAI_PROFILES,
];

const BY_KEY = new Map(BUILT_IN.map((profile) => [`${profile.protocol}:${profile.model}`, profile]));

/** The model path of an `upstream_model` (without a `?param=field` query). */
export function modelPath(upstreamModel: string): string {
  return (upstreamModel.split('?', 1)[0] ?? '').replace(/^\/+|\/+$/g, '');
}

/** The profile of a target: the one declared in the channels file, else a built-in one, else none. */
export function profileFor(protocol: ProtocolName, upstreamModel: string, declared?: TargetProfile): TargetProfile | undefined {
  return declared ?? BY_KEY.get(`${protocol}:${modelPath(upstreamModel)}`);
}

/** Just the check (create time, and the open profiles' submit): the problem, or none. */
export function checkProfile(profile: TargetProfile | undefined, kind: ModelKind, params: ResolvedParams, target: string): ParamProblem | undefined {
  if (!profile) return undefined;
  const plan = planInputs(profile, kind, params, target);
  return plan.ok ? undefined : plan.problem;
}

// ---------------------------------------------------------------------------------------------
// Declared in the channels file
// ---------------------------------------------------------------------------------------------

const TYPES: readonly ValueType[] = ['string', 'integer', 'number', 'boolean', 'media', 'media[]'];
const RULE_FIELDS = new Set(['field', 'type', 'map', 'values', 'min', 'max', 'omit', 'note', 'refuse', 'accept']);
const PROFILE_FIELDS = new Set(['source', 'inputs', 'size_to_aspect_ratio', 'pixels', 'ratio', 'fixed']);
const GENERIC: readonly ProtocolName[] = ['fal', 'replicate'];

const isObject = (value: unknown): value is Record<string, unknown> => typeof value === 'object' && value !== null && !Array.isArray(value);
const isScalar = (value: unknown): value is Scalar => value === null || ['string', 'number', 'boolean'].includes(typeof value);

function scalars(value: unknown, at: string, faults: string[]): Scalar[] | undefined {
  if (value === undefined) return undefined;
  if (!Array.isArray(value) || !value.every(isScalar)) {
    faults.push(`${at}: must be an array of strings, numbers, booleans or null`);
    return undefined;
  }
  return value;
}

function parseRule(raw: unknown, at: string, generic: boolean, faults: string[]): ParamRule | undefined {
  if (raw === null) return { refuse: 'the operator declared that this target has no such input.' };
  if (!isObject(raw)) {
    faults.push(`${at}: must be an object ({"field": ...} or {"refuse": ...}) or null`);
    return undefined;
  }
  for (const key of Object.keys(raw)) if (!RULE_FIELDS.has(key)) faults.push(`${at}.${key}: unknown field`);
  if (raw['refuse'] !== undefined) {
    if (typeof raw['refuse'] !== 'string' || raw['refuse'] === '') faults.push(`${at}.refuse: must be the reason, a non-empty string`);
    for (const key of Object.keys(raw)) if (key !== 'refuse' && key !== 'accept') faults.push(`${at}.${key}: a refused input takes only "accept"`);
    const accept = scalars(raw['accept'], `${at}.accept`, faults);
    return { refuse: typeof raw['refuse'] === 'string' ? raw['refuse'] : '', ...(accept ? { accept } : {}) };
  }
  const field = raw['field'];
  if (generic && (typeof field !== 'string' || !/^[A-Za-z0-9_-]+(\.[A-Za-z0-9_-]+)*$/.test(field)))
    faults.push(`${at}.field: must name the upstream input (letters, digits, '_', '-', dotted for nesting)`);
  if (!generic && field !== undefined)
    faults.push(`${at}.field: this protocol's adapter builds the request itself; declare only type, values, min, max, map, omit`);
  const type = raw['type'];
  if (type !== undefined && !TYPES.includes(type as ValueType)) faults.push(`${at}.type: must be one of ${TYPES.join(', ')}`);
  for (const bound of ['min', 'max'] as const) {
    if (raw[bound] !== undefined && (typeof raw[bound] !== 'number' || !Number.isFinite(raw[bound]))) faults.push(`${at}.${bound}: must be a number`);
  }
  let map: Record<string, Scalar> | undefined;
  if (raw['map'] !== undefined) {
    if (!isObject(raw['map']) || !Object.values(raw['map']).every(isScalar)) faults.push(`${at}.map: must be an object of our value -> upstream value`);
    else map = raw['map'] as Record<string, Scalar>;
  }
  const values = scalars(raw['values'], `${at}.values`, faults);
  const omit = scalars(raw['omit'], `${at}.omit`, faults);
  if (raw['note'] !== undefined && typeof raw['note'] !== 'string') faults.push(`${at}.note: must be a string`);
  return {
    field: typeof field === 'string' ? field : '',
    ...(typeof type === 'string' ? { type: type as ValueType } : {}),
    ...(map ? { map } : {}),
    ...(values ? { values } : {}),
    ...(omit ? { omit } : {}),
    ...(typeof raw['min'] === 'number' ? { min: raw['min'] } : {}),
    ...(typeof raw['max'] === 'number' ? { max: raw['max'] } : {}),
    ...(typeof raw['note'] === 'string' ? { note: raw['note'] } : {}),
  };
}

function range(raw: unknown, at: string, faults: string[]): { min: number; max: number } | undefined {
  if (raw === undefined) return undefined;
  if (!isObject(raw) || typeof raw['min'] !== 'number' || typeof raw['max'] !== 'number' || !(raw['min'] > 0) || !(raw['max'] >= raw['min'])) {
    faults.push(`${at}: must be {"min": n, "max": m} with 0 < n <= m`);
    return undefined;
  }
  return { min: raw['min'], max: raw['max'] };
}

/**
 * A profile declared on a route target (`routes[i].to[j].profile`). For fal and Replicate it is
 * closed (the input is exactly its fields) and every input needs a `field`; for the other
 * protocols it adds constraints to what the adapter builds. Faults are pushed with JSON paths.
 */
export function parseProfile(raw: unknown, at: string, protocol: ProtocolName, upstreamModel: string, faults: string[]): TargetProfile | undefined {
  if (!isObject(raw)) {
    faults.push(`${at}: must be an object with "inputs"`);
    return undefined;
  }
  const before = faults.length;
  if (protocol === 'sandbox' || protocol === 'mediagate') faults.push(`${at}: a ${protocol} target takes no profile (it validates the catalog itself)`);
  for (const key of Object.keys(raw)) if (!PROFILE_FIELDS.has(key)) faults.push(`${at}.${key}: unknown field`);
  const generic = GENERIC.includes(protocol);
  const params: Record<string, ParamRule> = {};
  if (!isObject(raw['inputs'])) faults.push(`${at}.inputs: must be an object of our parameter -> rule`);
  else {
    for (const [param, rule] of Object.entries(raw['inputs'])) {
      const parsed = parseRule(rule, `${at}.inputs.${param}`, generic, faults);
      if (parsed) params[param] = parsed;
    }
  }
  if (raw['source'] !== undefined && typeof raw['source'] !== 'string') faults.push(`${at}.source: must be a string (where the inputs are documented)`);
  let sizeToAspectRatio: SizeToAspectRatio | undefined;
  const sar = raw['size_to_aspect_ratio'];
  if (sar !== undefined) {
    if (
      !isObject(sar) ||
      typeof sar['field'] !== 'string' ||
      !Array.isArray(sar['values']) ||
      !sar['values'].every((v) => typeof v === 'string' && /^\d+:\d+$/.test(v))
    )
      faults.push(`${at}.size_to_aspect_ratio: must be {"field": "...", "values": ["16:9", ...]}`);
    else sizeToAspectRatio = { field: sar['field'], values: sar['values'] as string[] };
  }
  const pixels = range(raw['pixels'], `${at}.pixels`, faults);
  const ratio = range(raw['ratio'], `${at}.ratio`, faults);
  let fixed: Record<string, Scalar> | undefined;
  if (raw['fixed'] !== undefined) {
    if (!generic) faults.push(`${at}.fixed: only fal and replicate targets take constant inputs`);
    else if (!isObject(raw['fixed']) || !Object.values(raw['fixed']).every(isScalar)) faults.push(`${at}.fixed: must be an object of field -> value`);
    else fixed = raw['fixed'] as Record<string, Scalar>;
  }
  if (faults.length > before) return undefined;
  return {
    protocol,
    model: modelPath(upstreamModel),
    source: typeof raw['source'] === 'string' ? raw['source'] : 'declared in the channels file',
    closed: generic,
    params,
    declared: true,
    ...(sizeToAspectRatio ? { sizeToAspectRatio } : {}),
    ...(pixels ? { pixels } : {}),
    ...(ratio ? { ratio } : {}),
    ...(fixed ? { fixed } : {}),
  };
}
