import { IMAGE_MODELS } from './image-models.js';
import type { ModelRow } from './types.js';
import { VIDEO_MODELS } from './video-models.js';

export * from './types.js';
export { createValidator, type CheckedMedia, type Validator, type Validated } from './validate.js';
export { videoRequestSchema, imageRequestSchema, type JsonSchema } from './schema.js';

/** Every model, video first, in the seed's order. */
export const MODELS: readonly ModelRow[] = [...VIDEO_MODELS, ...IMAGE_MODELS];

const BY_ID = new Map(MODELS.map((row) => [row.id, row]));

export function findModel(id: string): ModelRow | undefined {
  return BY_ID.get(id);
}

/** Aspect ratios a video row lists, without `adaptive` (geometry snaps an input image to these). */
export function listedAspectRatios(row: ModelRow): readonly string[] {
  if (row.kind !== 'video' || !row.aspectRatio) return [];
  return row.aspectRatio.values.filter((value) => value !== 'adaptive');
}
