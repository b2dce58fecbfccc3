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

/** A row's words for people: its display name and what it does (the listing adds the ranges). */
type RowText = Required<Pick<VideoModelRow, 'displayName' | 'description'>>;

const FIRST_FRAME = 'The prompt and a first-frame image (`image`) are required';

const famw27Spicy = (id: string, summary: string, text: RowText): VideoModelRow => ({
  id,
  kind: 'video',
  summary,
  ...text,
  family: 'FamW',
  required: ['image'],
  optional: ['end_image', 'audio_enable', 'negative_prompt', 'prompt_extend'],
  duration: { min: 2, max: 15 },
  resolution: P720_1080,
  aspectRatio: null,
  seed: { min: -1 },
});

const famw30Ref = (id: string, summary: string, text: RowText): VideoModelRow => ({
  id,
  kind: 'video',
  summary,
  ...text,
  family: 'FamW',
  required: [],
  // prompt_extend: seed rule 6 leaves it open; decisions §3 accepts it (the row lists it).
  optional: ['images', 'videos', 'audios', 'audio_enable', 'aspect_ratio', 'prompt_extend'],
  duration: { min: 2, max: 30 },
  resolution: P480_1080,
  aspectRatio: { values: FAMW_AR },
  seed: INT32,
  items: { images: { max: 10 }, videos: { max: 5 }, audios: { max: 5 } },
});

const vendorcFixed = (id: string, summary: string, text: RowText, resolution: VideoModelRow['resolution']): VideoModelRow => ({
  id,
  kind: 'video',
  summary,
  ...text,
  family: 'H3',
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
    displayName: 'FamW 2.7 Image to Video',
    family: 'FamW',
    description:
      'Animates a still: the clip starts from the image you give (`image`, required) and follows the prompt; an optional last frame (`end_image`) sets where it ends. `prompt_extend` lets the upstream rewrite a short prompt.',
    summary: 'Image to video.',
    required: ['image'],
    optional: ['end_image', 'prompt_extend'],
    duration: { min: 2, max: 15 },
    resolution: P480_1080,
    aspectRatio: null,
    seed: { min: -1 },
  },
  famw27Spicy('vendora/famw-2.7-i2v-spicy', 'Image to video, spicy channel.', {
    displayName: 'FamW 2.7 Image to Video (spicy)',
    description: `${FIRST_FRAME} on this spicy channel; an optional last frame (\`end_image\`), negative prompt and generated audio (\`audio_enable\`).`,
  }),
  famw27Spicy('vendora/famw-2.7-i2v-uncensored', 'Image to video without content moderation.', {
    displayName: 'FamW 2.7 Image to Video (uncensored)',
    description: `${FIRST_FRAME}, without upstream content moderation; an optional last frame (\`end_image\`), negative prompt and generated audio.`,
  }),
  {
    id: 'vendora/famw-2.7-ref2v-uncensored',
    kind: 'video',
    displayName: 'FamW 2.7 Reference to Video (uncensored)',
    family: 'FamW',
    description:
      'Makes a clip in which the subjects of your reference images (`images`, up to 3) and reference videos (`videos`, up to 3) appear, as the prompt describes; no upstream content moderation. Optional generated audio (`audio_enable`).',
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
    displayName: 'FamW 2.7 Text to Video',
    family: 'FamW',
    description: 'Makes a clip from the prompt alone: no image needed. Choose the aspect ratio; `prompt_extend` lets the upstream rewrite a short prompt.',
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
    displayName: 'FamW 3.0 Image to Video (spicy)',
    family: 'FamW',
    description:
      'FamW 3.0 animating a first frame (`image`, required) on the spicy channel, with an optional last frame (`end_image`), aspect ratio and generated audio (`audio_enable`). Clips up to 30 s.',
    summary: 'Image to video, spicy channel.',
    required: ['image'],
    optional: ['end_image', 'audio_enable', 'aspect_ratio'],
    duration: { min: 2, max: 30 },
    resolution: P480_1080,
    aspectRatio: { values: FAMW_AR },
    seed: INT32,
  },
  famw30Ref('vendora/famw-3.0-ref2v-spicy', 'Reference images, videos and audio to video, spicy channel.', {
    displayName: 'FamW 3.0 Reference to Video (spicy)',
    description:
      'Makes a clip from optional references on the spicy channel: up to 10 images, 5 videos and 5 audio tracks, with aspect ratio and generated audio. Clips up to 30 s.',
  }),
  famw30Ref('vendora/famw-3.0-prime-ref2v-spicy', 'Reference to video, prime quality, spicy channel.', {
    displayName: 'FamW 3.0 Prime Reference to Video (spicy)',
    description:
      'FamW 3.0 at prime quality on the spicy channel, from optional references (up to 10 images, 5 videos, 5 audio tracks), with aspect ratio and generated audio. Clips up to 30 s.',
  }),
  famw30Ref('famw-3-0-prime-reference-to-video', 'Reference to video, prime quality.', {
    displayName: 'FamW 3.0 Prime Reference to Video',
    description:
      'FamW 3.0 at prime quality from optional references (up to 10 images, 5 videos, 5 audio tracks) or the prompt alone, with aspect ratio and generated audio. Clips up to 30 s.',
  }),
  {
    id: 'famw-3-0-prime-image-to-video',
    kind: 'video',
    displayName: 'FamW 3.0 Prime Image to Video',
    family: 'FamW',
    description:
      'FamW 3.0 at prime quality animating a first frame (`image`, required), with an optional last frame (`end_image`), aspect ratio and generated audio. Clips up to 30 s.',
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
    displayName: 'FamSD 2.0 Image to Video (spicy)',
    family: 'FamSD',
    description:
      'Animates a first frame (`image`, required) on the spicy channel, up to 4k; an optional last frame (`end_image`), aspect ratio and generated audio.',
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
    displayName: 'FamSD 2.5 Image to Video (spicy)',
    family: 'FamSD',
    description:
      'FamSD 2.5 animating a first frame (`image`, required) on the spicy channel, for long clips (up to 30 s) at 480p or 720p; an optional last frame, aspect ratio and generated audio.',
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
    displayName: 'FamSD 2.0 Mini Reference to Video (spicy)',
    family: 'FamSD',
    description:
      'A lighter FamSD making one clip from references: at least one of reference images (up to 9), videos (up to 3) or audio tracks (up to 3) is required, with the prompt saying how they combine.',
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
    displayName: 'H3 Max Reference to Video',
    family: 'H3',
    description:
      'H3 Max building a clip from many references: up to 30 images, 10 videos and 10 audio tracks, plus an optional last frame and negative prompt. Duration, resolution and aspect ratio are passed on and checked by the upstream.',
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
    displayName: 'H3 Max Turbo Image to Video',
    family: 'H3',
    description:
      'The faster H3 Max: animates a first frame (`image`, required), with an optional last frame, negative prompt, audio track and aspect ratio. Duration, resolution and aspect ratio are checked by the upstream.',
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
    displayName: 'H3 Enhanced Reference to Video',
    family: 'H3',
    description:
      'H3 Enhanced making a clip from reference images, videos and audio tracks (up to 9 each); `aspect_ratio` is required. Resolutions go up to 4k.',
    summary: 'Reference to video, enhanced; aspect_ratio is required.',
    required: ['aspect_ratio'],
    optional: ['images', 'videos', 'audios'],
    duration: { min: 5, max: 15 },
    resolution: { values: ['768p', '2k', '4k'], default: '768p' },
    aspectRatio: { values: ['21:9', '16:9', '4:3', '1:1', '3:4', '9:16'] },
    seed: ANY_SEED,
    items: { images: { max: 9 }, videos: { max: 9 }, audios: { max: 9 } },
  },
  vendorcFixed(
    'vendorc-h3-max-image-to-video',
    'Image to video.',
    { displayName: 'H3 Max Image to Video', description: `${FIRST_FRAME}; nothing else is taken. At 480p or 768p.` },
    { values: ['480p', '768p'], default: '480p' },
  ),
  // `2K` with a capital K is this model's spelling; `2k` is refused here (decisions §2).
  vendorcFixed(
    'vendorc-h3-image-to-video',
    'Image to video.',
    { displayName: 'H3 Image to Video', description: `${FIRST_FRAME}; nothing else is taken. At 768p or 2K (capital K).` },
    { values: ['768p', '2K'], default: '768p' },
  ),
  vendorcFixed(
    'vendorc/vendorc-h3-i2v-spicy',
    'Image to video, spicy channel.',
    { displayName: 'H3 Image to Video (spicy)', description: `${FIRST_FRAME} on the spicy channel; nothing else is taken. Up to 4k.` },
    { values: ['768p', '2k', '4k'], default: '768p' },
  ),
  {
    id: 'vendord/v6/reference-to-video',
    kind: 'video',
    displayName: 'V6 Reference to Video',
    family: 'V6',
    description:
      'Makes a clip from 1 to 7 reference images (`images`, required), which the prompt names as @image1, @image2, ...; generated audio is on by default. The request body may be at most 20 MB.',
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
    displayName: 'V6 Image to Video',
    family: 'V6',
    description:
      'Animates an image (`image`, optional: without one it works from the prompt alone); JPG or PNG, at most 10 MB, at least 300x300, ratio 0.4 to 2.5. Generated audio is on by default.',
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
