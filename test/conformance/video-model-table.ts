/**
 * The video model table, transcribed by hand from the seed ("Video models" table and
 * model-specific rules 1-6) and decisions §2 and decisions §3. Deliberately independent of
 * `src/catalog`: this is the second transcription the implementation is checked against.
 */

/** Common video request parameters other than model, prompt, duration, resolution and seed. */
export type OptionalParam =
  'negative_prompt' | 'image' | 'end_image' | 'images' | 'videos' | 'audios' | 'audio' | 'audio_enable' | 'aspect_ratio' | 'prompt_extend' | 'extra';

export type ArrayParam = 'images' | 'videos' | 'audios';
export type MediaParam = 'image' | 'end_image' | 'audio';

/** Every parameter a row may or may not accept (seed "Common video request parameters" + decisions §3 `extra`). */
export const ALL_OPTIONAL_PARAMS: readonly OptionalParam[] = [
  'negative_prompt',
  'image',
  'end_image',
  'images',
  'videos',
  'audios',
  'audio',
  'audio_enable',
  'aspect_ratio',
  'prompt_extend',
  'extra',
];

export interface Range {
  readonly min: number;
  readonly max: number;
}

/** `null` bound = unbounded on that side (any integer). */
export interface SeedBounds {
  readonly min: number | null;
  readonly max: number | null;
}

export interface ListSpec {
  readonly values: readonly string[];
  /** The row's default; `null` = "no default" (stays unset). */
  readonly default: string | null;
}

/**
 * - a list: the accepted values;
 * - `'unchecked'`: a dash in the row for a model that accepts the parameter (decisions §3:
 *   accept any value of the right type);
 * - `'not-accepted'`: the model does not accept the parameter at all.
 */
export type AspectSpec = ListSpec | 'unchecked' | 'not-accepted';

export interface VideoModelRow {
  readonly id: string;
  /** Required inputs besides model and prompt. */
  readonly required: readonly OptionalParam[];
  /** Seed rule 1: at least one of these arrays must hold an item (param `images` when none does). */
  readonly atLeastOneOf?: readonly ArrayParam[];
  /** Optional parameters (besides duration, resolution, seed). */
  readonly optional: readonly OptionalParam[];
  readonly duration: Range | 'unchecked';
  readonly resolution: ListSpec | 'unchecked';
  readonly aspectRatio: AspectSpec;
  readonly seed: SeedBounds;
  readonly arrayMax: Readonly<Partial<Record<ArrayParam, number>>>;
  readonly arrayMin?: Readonly<Partial<Record<ArrayParam, number>>>;
}

const FAMW_AR: ListSpec = { values: ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4'], default: null };
const FAMSD_AR: ListSpec = { values: ['adaptive', '16:9', '4:3', '1:1', '3:4', '9:16', '21:9'], default: null };
const P480_720_1080: ListSpec = { values: ['480p', '720p', '1080p'], default: '720p' };
const P720_1080: ListSpec = { values: ['720p', '1080p'], default: '720p' };
const V6_RES: ListSpec = { values: ['360p', '540p', '720p', '1080p'], default: '720p' };

const SEED_GE_MINUS_1: SeedBounds = { min: -1, max: null };
const SEED_INT32: SeedBounds = { min: -1, max: 2147483647 };
const SEED_FAMSD: SeedBounds = { min: -1, max: 4294967296 };
const SEED_ANY: SeedBounds = { min: null, max: null };

const FAMW_27_I2V_SPICY_OPTIONAL: readonly OptionalParam[] = ['end_image', 'audio_enable', 'negative_prompt', 'prompt_extend'];
const FAMW_30_REF_OPTIONAL: readonly OptionalParam[] = ['images', 'videos', 'audios', 'audio_enable', 'aspect_ratio', 'prompt_extend'];
const FAMW_30_REF_MAX = { images: 10, videos: 5, audios: 5 } as const;

export const VIDEO_MODELS: readonly VideoModelRow[] = [
  {
    id: 'vendora/famw-2.7-i2v',
    required: ['image'],
    optional: ['end_image', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P480_720_1080,
    aspectRatio: 'not-accepted',
    seed: SEED_GE_MINUS_1,
    arrayMax: {},
  },
  {
    id: 'vendora/famw-2.7-i2v-spicy',
    required: ['image'],
    optional: FAMW_27_I2V_SPICY_OPTIONAL,
    duration: { min: 2, max: 15 },
    resolution: P720_1080,
    aspectRatio: 'not-accepted',
    seed: SEED_GE_MINUS_1,
    arrayMax: {},
  },
  {
    id: 'vendora/famw-2.7-i2v-uncensored',
    required: ['image'],
    optional: FAMW_27_I2V_SPICY_OPTIONAL,
    duration: { min: 2, max: 15 },
    resolution: P720_1080,
    aspectRatio: 'not-accepted',
    seed: SEED_GE_MINUS_1,
    arrayMax: {},
  },
  {
    id: 'vendora/famw-2.7-ref2v-uncensored',
    required: [],
    optional: ['images', 'videos', 'audio_enable', 'negative_prompt', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P720_1080,
    aspectRatio: 'not-accepted',
    seed: SEED_GE_MINUS_1,
    arrayMax: { images: 3, videos: 3 },
  },
  {
    id: 'vendora/famw-2.7-t2v',
    required: [],
    optional: ['aspect_ratio', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P480_720_1080,
    aspectRatio: FAMW_AR,
    seed: SEED_GE_MINUS_1,
    arrayMax: {},
  },
  {
    id: 'vendora/famw-3.0-i2v-spicy',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 2, max: 30 },
    resolution: P480_720_1080,
    aspectRatio: FAMW_AR,
    seed: SEED_INT32,
    arrayMax: {},
  },
  {
    id: 'vendora/famw-3.0-ref2v-spicy',
    required: [],
    optional: FAMW_30_REF_OPTIONAL,
    duration: { min: 2, max: 30 },
    resolution: P480_720_1080,
    aspectRatio: FAMW_AR,
    seed: SEED_INT32,
    arrayMax: FAMW_30_REF_MAX,
  },
  {
    id: 'vendora/famw-3.0-prime-ref2v-spicy',
    required: [],
    optional: FAMW_30_REF_OPTIONAL,
    duration: { min: 2, max: 30 },
    resolution: P480_720_1080,
    aspectRatio: FAMW_AR,
    seed: SEED_INT32,
    arrayMax: FAMW_30_REF_MAX,
  },
  {
    id: 'famw-3-0-prime-reference-to-video',
    required: [],
    optional: FAMW_30_REF_OPTIONAL,
    duration: { min: 2, max: 30 },
    resolution: P480_720_1080,
    aspectRatio: FAMW_AR,
    seed: SEED_INT32,
    arrayMax: FAMW_30_REF_MAX,
  },
  {
    id: 'famw-3-0-prime-image-to-video',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio', 'prompt_extend'],
    duration: { min: 2, max: 30 },
    resolution: P480_720_1080,
    aspectRatio: FAMW_AR,
    seed: SEED_INT32,
    arrayMax: {},
  },
  {
    id: 'vendorb/famsd-2.0-i2v-spicy',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 4, max: 15 },
    resolution: { values: ['480p', '720p', '1080p', '4k'], default: '720p' },
    aspectRatio: FAMSD_AR,
    seed: SEED_FAMSD,
    arrayMax: {},
  },
  {
    id: 'vendorb/famsd-2.5-i2v-spicy',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 4, max: 30 },
    resolution: { values: ['480p', '720p'], default: '720p' },
    aspectRatio: FAMSD_AR,
    seed: SEED_FAMSD,
    arrayMax: {},
  },
  {
    id: 'vendorb/famsd-2.0-mini-ref2v-spicy',
    required: [],
    atLeastOneOf: ['images', 'videos', 'audios'],
    optional: ['images', 'videos', 'audios', 'audio_enable', 'aspect_ratio'],
    duration: { min: 4, max: 15 },
    resolution: P720_1080,
    aspectRatio: { values: ['16:9', '9:16', '4:3', '3:4', '1:1', '21:9'], default: '16:9' },
    seed: SEED_ANY,
    arrayMax: { images: 9, videos: 3, audios: 3 },
  },
  {
    id: 'vendorc-h3-max-reference-to-video',
    required: [],
    optional: ['negative_prompt', 'end_image', 'images', 'videos', 'audios', 'audio', 'audio_enable', 'aspect_ratio'],
    duration: 'unchecked',
    resolution: 'unchecked',
    aspectRatio: 'unchecked',
    seed: SEED_ANY,
    arrayMax: { images: 30, videos: 10, audios: 10 },
  },
  {
    id: 'vendorc-h3-max-turbo-image-to-video',
    required: ['image'],
    optional: ['negative_prompt', 'end_image', 'audio', 'audio_enable', 'aspect_ratio'],
    duration: 'unchecked',
    resolution: 'unchecked',
    aspectRatio: 'unchecked',
    seed: SEED_ANY,
    arrayMax: {},
  },
  {
    id: 'vendorc-h3-enhanced-reference-to-video',
    required: ['aspect_ratio'],
    optional: ['images', 'videos', 'audios'],
    duration: { min: 5, max: 15 },
    resolution: { values: ['768p', '2k', '4k'], default: '768p' },
    aspectRatio: { values: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'], default: null },
    seed: SEED_ANY,
    arrayMax: { images: 9, videos: 9, audios: 9 },
  },
  {
    id: 'vendorc-h3-max-image-to-video',
    required: ['image'],
    optional: [],
    duration: { min: 5, max: 15 },
    resolution: { values: ['480p', '768p'], default: '480p' },
    aspectRatio: 'not-accepted',
    seed: SEED_ANY,
    arrayMax: {},
  },
  {
    id: 'vendorc-h3-image-to-video',
    required: ['image'],
    optional: [],
    duration: { min: 5, max: 15 },
    resolution: { values: ['768p', '2K'], default: '768p' },
    aspectRatio: 'not-accepted',
    seed: SEED_ANY,
    arrayMax: {},
  },
  {
    id: 'vendorc/vendorc-h3-i2v-spicy',
    required: ['image'],
    optional: [],
    duration: { min: 5, max: 15 },
    resolution: { values: ['768p', '2k', '4k'], default: '768p' },
    aspectRatio: 'not-accepted',
    seed: SEED_ANY,
    arrayMax: {},
  },
  {
    id: 'vendord/v6/reference-to-video',
    required: ['images'],
    optional: ['audio_enable', 'aspect_ratio', 'extra'],
    duration: { min: 1, max: 15 },
    resolution: V6_RES,
    aspectRatio: { values: ['16:9', '9:16', '1:1', '4:3', '3:4', '2:3', '3:2', '21:9'], default: '16:9' },
    seed: SEED_ANY,
    arrayMax: { images: 7 },
    arrayMin: { images: 1 },
  },
  {
    id: 'vendord/v6/image-to-video',
    required: [],
    optional: ['image', 'audio_enable'],
    duration: { min: 1, max: 15 },
    resolution: V6_RES,
    aspectRatio: 'not-accepted',
    seed: SEED_ANY,
    arrayMax: {},
  },
];

export const IMAGE_MODEL_IDS = ['vendora/famz-image-spicy', 'vendora/famz-image-spicy-pro'] as const;

/** Whether the row accepts the parameter at all (required or optional), per decisions §3. */
export function accepts(row: VideoModelRow, param: OptionalParam): boolean {
  return row.required.includes(param) || row.optional.includes(param);
}

/** The union of every aspect ratio and resolution listed anywhere, to probe each row with the others'. */
export const ALL_LISTED_ASPECT_RATIOS: readonly string[] = [
  ...new Set(VIDEO_MODELS.flatMap((m) => (typeof m.aspectRatio === 'object' ? m.aspectRatio.values : []))),
];
export const ALL_LISTED_RESOLUTIONS: readonly string[] = [
  ...new Set(VIDEO_MODELS.flatMap((m) => (typeof m.resolution === 'object' ? m.resolution.values : []))),
];
