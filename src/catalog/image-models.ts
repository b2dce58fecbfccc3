import type { ImageModelRow } from './types.js';

/** The two image models of the seed's image table. */
export const IMAGE_MODELS: readonly ImageModelRow[] = [
  {
    id: 'vendora/famz-image-spicy',
    kind: 'image',
    displayName: 'FamZ Image (spicy)',
    family: 'FamZ',
    description:
      'Makes one image from the prompt on the spicy channel; set `size` (or `width` and `height`) and a seed. `prompt_extend` (on by default) lets the upstream rewrite a short prompt.',
    summary: 'Text to image, up to 1536 px a side.',
    side: { min: 256, max: 1536 },
    defaults: { width: 1024, height: 1536, prompt_extend: true },
    seed: { min: 0, nullable: false },
    promptExtendNullable: false,
  },
  {
    id: 'vendora/famz-image-spicy-pro',
    kind: 'image',
    displayName: 'FamZ Image Pro (spicy)',
    family: 'FamZ',
    description:
      'The pro FamZ: one larger, more detailed image from the prompt on the spicy channel; set `size` (or `width` and `height`) and a seed. `prompt_extend` is off by default.',
    summary: 'Text to image, pro, up to 2560 px a side.',
    side: { min: 256, max: 2560 },
    defaults: { width: 1024, height: 1024, prompt_extend: false },
    seed: { min: 0, max: 2147483647, nullable: true },
    promptExtendNullable: true,
  },
];
