import type { VideoInputParam, VideoModelRow } from './types.js';

/**
 * The 21 video models of the seed's model table, one row each, transcribed column by column.
 * Adding a model is adding a row: validation, JSON Schema, OpenAPI, listing and SDK types follow.
 */

const FAMW_AR = ['adaptive', '16:9', '9:16', '1:1', '4:3', '3:4'] as const;
const FAMSD_AR = ['adaptive', '16:9', '4:3', '1:1', '3:4', '9:16', '21:9'] as const;
const P480_1080 = { values: ['480p', '720p', '1080p'], default: '720p' } as const;
const P720_1080 = { values: ['720p', '1080p'], default: '720p' } as const;
const INT32 = { min: -1, max: 2147483647 } as const;
const UINT32_PLUS_ONE = { min: -1, max: 4294967296 } as const;
const ANY_SEED = {} as const;
const V6_RES = { values: ['360p', '540p', '720p', '1080p'], default: '720p' } as const;

const famw27Spicy = (id: string, summary: string): VideoModelRow => ({
  id,
  kind: 'video',
  summary,
  required: ['image'],
  optional: ['end_image', 'audio_enable', 'negative_prompt', 'prompt_extend'],
  duration: { min: 2, max: 15 },
  resolution: P720_1080,
  aspectRatio: null,
  seed: { min: -1 },
});

const famw30Ref = (id: string, summary: string): VideoModelRow => ({
  id,
  kind: 'video',
  summary,
  required: [],
  // prompt_extend: seed rule 6 leaves it open; decisions §3 accepts it (the row lists it).
  optional: ['images', 'videos', 'audios', 'audio_enable', 'aspect_ratio', 'prompt_extend'],
  duration: { min: 2, max: 30 },
  resolution: P480_1080,
  aspectRatio: { values: FAMW_AR },
  seed: INT32,
  items: { images: { max: 10 }, videos: { max: 5 }, audios: { max: 5 } },
});

const vendorcFixed = (id: string, summary: string, resolution: VideoModelRow['resolution']): VideoModelRow => ({
  id,
  kind: 'video',
  summary,
  required: ['image'],
  optional: [],
  duration: { min: 5, max: 15 },
  resolution,
  aspectRatio: null,
  seed: ANY_SEED,
});

const VENDORC_MAX_OPTIONAL: readonly VideoInputParam[] = ['negative_prompt', 'end_image', 'audio', 'audio_enable', 'aspect_ratio'];

export const VIDEO_MODELS: readonly VideoModelRow[] = [
  {
    id: 'vendora/famw-2.7-i2v',
    kind: 'video',
    summary: 'Image to video.',
    required: ['image'],
    optional: ['end_image', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P480_1080,
    aspectRatio: null,
    seed: { min: -1 },
  },
  famw27Spicy('vendora/famw-2.7-i2v-spicy', 'Image to video, spicy channel.'),
  famw27Spicy('vendora/famw-2.7-i2v-uncensored', 'Image to video without content moderation.'),
  {
    id: 'vendora/famw-2.7-ref2v-uncensored',
    kind: 'video',
    summary: 'Reference images and videos to video, without content moderation.',
    required: [],
    optional: ['images', 'videos', 'audio_enable', 'negative_prompt', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P720_1080,
    aspectRatio: null,
    seed: { min: -1 },
    items: { images: { max: 3 }, videos: { max: 3 } },
  },
  {
    id: 'vendora/famw-2.7-t2v',
    kind: 'video',
    summary: 'Text to video.',
    required: [],
    optional: ['aspect_ratio', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P480_1080,
    aspectRatio: { values: FAMW_AR },
    seed: { min: -1 },
  },
  {
    id: 'vendora/famw-3.0-i2v-spicy',
    kind: 'video',
    summary: 'Image to video, spicy channel.',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 2, max: 30 },
    resolution: P480_1080,
    aspectRatio: { values: FAMW_AR },
    seed: INT32,
  },
  famw30Ref('vendora/famw-3.0-ref2v-spicy', 'Reference images, videos and audio to video, spicy channel.'),
  famw30Ref('vendora/famw-3.0-prime-ref2v-spicy', 'Reference to video, prime quality, spicy channel.'),
  famw30Ref('famw-3-0-prime-reference-to-video', 'Reference to video, prime quality.'),
  {
    id: 'famw-3-0-prime-image-to-video',
    kind: 'video',
    summary: 'Image to video, prime quality.',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio', 'prompt_extend'],
    duration: { min: 2, max: 30 },
    resolution: P480_1080,
    aspectRatio: { values: FAMW_AR },
    seed: INT32,
  },
  {
    id: 'vendorb/famsd-2.0-i2v-spicy',
    kind: 'video',
    summary: 'Image to video up to 4k, spicy channel.',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 4, max: 15 },
    resolution: { values: ['480p', '720p', '1080p', '4k'], default: '720p' },
    aspectRatio: { values: FAMSD_AR },
    seed: UINT32_PLUS_ONE,
  },
  {
    id: 'vendorb/famsd-2.5-i2v-spicy',
    kind: 'video',
    summary: 'Image to video up to 30 s, spicy channel.',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 4, max: 30 },
    resolution: { values: ['480p', '720p'], default: '720p' },
    aspectRatio: { values: FAMSD_AR },
    seed: UINT32_PLUS_ONE,
  },
  {
    id: 'vendorb/famsd-2.0-mini-ref2v-spicy',
    kind: 'video',
    summary: 'Reference to video; one video per request; needs at least one reference.',
    required: [],
    optional: ['images', 'videos', 'audios', 'audio_enable', 'aspect_ratio'],
    duration: { min: 4, max: 15 },
    resolution: P720_1080,
    aspectRatio: { values: ['16:9', '9:16', '4:3', '3:4', '1:1', '21:9'], default: '16:9' },
    seed: ANY_SEED,
    items: { images: { max: 9 }, videos: { max: 3 }, audios: { max: 3 } },
    atLeastOneOf: ['images', 'videos', 'audios'],
  },
  {
    id: 'vendorc-h3-max-reference-to-video',
    kind: 'video',
    summary: 'Reference to video; duration, resolution and aspect ratio are checked upstream.',
    required: [],
    optional: ['negative_prompt', 'end_image', 'images', 'videos', 'audios', 'audio', 'audio_enable', 'aspect_ratio'],
    duration: null,
    resolution: null,
    aspectRatio: null,
    seed: ANY_SEED,
    items: { images: { max: 30 }, videos: { max: 10 }, audios: { max: 10 } },
  },
  {
    id: 'vendorc-h3-max-turbo-image-to-video',
    kind: 'video',
    summary: 'Image to video, turbo; duration, resolution and aspect ratio are checked upstream.',
    required: ['image'],
    optional: VENDORC_MAX_OPTIONAL,
    duration: null,
    resolution: null,
    aspectRatio: null,
    seed: ANY_SEED,
  },
  {
    id: 'vendorc-h3-enhanced-reference-to-video',
    kind: 'video',
    summary: 'Reference to video, enhanced; aspect_ratio is required.',
    required: ['aspect_ratio'],
    optional: ['images', 'videos', 'audios'],
    duration: { min: 5, max: 15 },
    resolution: { values: ['768p', '2k', '4k'], default: '768p' },
    aspectRatio: { values: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] },
    seed: ANY_SEED,
    items: { images: { max: 9 }, videos: { max: 9 }, audios: { max: 9 } },
  },
  vendorcFixed('vendorc-h3-max-image-to-video', 'Image to video.', { values: ['480p', '768p'], default: '480p' }),
  // `2K` with a capital K is this model's spelling; `2k` is refused here (decisions §2).
  vendorcFixed('vendorc-h3-image-to-video', 'Image to video.', { values: ['768p', '2K'], default: '768p' }),
  vendorcFixed('vendorc/vendorc-h3-i2v-spicy', 'Image to video, spicy channel.', { values: ['768p', '2k', '4k'], default: '768p' }),
  {
    id: 'vendord/v6/reference-to-video',
    kind: 'video',
    summary: 'Reference images (tagged @image1, @image2, ...) to video; body at most 20 MB.',
    required: ['images'],
    optional: ['audio_enable', 'aspect_ratio', 'extra'],
    duration: { min: 1, max: 15 },
    resolution: V6_RES,
    aspectRatio: { values: ['16:9', '9:16', '1:1', '4:3', '3:4', '2:3', '3:2', '21:9'], default: '16:9' },
    seed: ANY_SEED,
    items: { images: { min: 1, max: 7 } },
    defaults: { audio_enable: true },
    maxBodyBytes: 20 * 1024 * 1024,
    imageOptions: { refNameMaxBytes: 30 },
  },
  {
    id: 'vendord/v6/image-to-video',
    kind: 'video',
    summary: 'Image to video; the image is optional (JPG/PNG, at most 10 MB, at least 300x300, ratio 0.4-2.5).',
    required: [],
    optional: ['image', 'audio_enable'],
    duration: { min: 1, max: 15 },
    resolution: V6_RES,
    aspectRatio: null,
    seed: ANY_SEED,
    defaults: { audio_enable: true },
    imageRule3: true,
  },
];
