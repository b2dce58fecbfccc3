import { IMAGE_MODELS } from './image-models.js';
import type { ModelRow } from './types.js';
import { VIDEO_MODELS } from './video-models.js';

export * from './types.js';
export { createValidator, type CheckedMedia, type Validator, type ValidatorOptions, type Validated } from './validate.js';
export { videoRequestSchema, imageRequestSchema, type JsonSchema } from './schema.js';
export { defaultDisplayName, description, displayName, family } from './names.js';
export { MEANINGFUL, ModelsConfigError, loadModelsFile, parseModelsFile } from './declared.js';
export { deprecationHeaders, isDeprecated, isRetired, lifecycleEpoch, lifecycleView, offeredRows, retiredMessage, type LifecycleView } from './lifecycle.js';

/** The built-in models, video first, in the seed's order. */
export const MODELS: readonly ModelRow[] = [...VIDEO_MODELS, ...IMAGE_MODELS];

const BY_ID = new Map(MODELS.map((row) => [row.id, row]));

/**
 * The declared models (MEDIAGATE_MODELS_FILE) of this process, set once at start by
 * `declareModels`: from then on they are rows of the same table as the built-ins, found by
 * `findModel` and listed by `allModels` (what the pricing and channels files are checked
 * against). A later declaration (a spec starting another server) replaces the list; rows of an
 * earlier one stay findable by id, so that server's tasks still read their model.
 */
let declared: readonly ModelRow[] = [];
let everyModel: readonly ModelRow[] = MODELS;
const DECLARED_BY_ID = new Map<string, ModelRow>();

export function declareModels(rows: readonly ModelRow[]): void {
  declared = rows;
  everyModel = rows.length === 0 ? MODELS : [...MODELS, ...rows];
  for (const row of rows) DECLARED_BY_ID.set(row.id, row);
}

/** Built-in and declared models: the one model table. */
export function allModels(): readonly ModelRow[] {
  return everyModel;
}

/** The declared models of this process. */
export function declaredModels(): readonly ModelRow[] {
  return declared;
}

export function findModel(id: string): ModelRow | undefined {
  return BY_ID.get(id) ?? DECLARED_BY_ID.get(id);
}

/** Aspect ratios a video row lists, without `adaptive` (geometry snaps an input image to these). */
export function listedAspectRatios(row: ModelRow): readonly string[] {
  if (row.kind !== 'video' || !row.aspectRatio) return [];
  return row.aspectRatio.values.filter((value) => value !== 'adaptive');
}
