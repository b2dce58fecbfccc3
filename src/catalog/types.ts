/**
 * Glossary
 * - row: one model of the catalog, as data. Everything a model does (validation, JSON Schema,
 *   OpenAPI entry, listing, SDK types, geometry) is derived from its row.
 * - accepted parameters: `model`, `prompt`, `duration`, `resolution`, `seed` for every video
 *   model, plus the row's `required` and `optional` lists (decisions §3).
 * - "not shown" (a dash in the seed): the constraint is unknown here; we accept any value of the
 *   right type and pass it on (decisions §3).
 */

/** Parameters a video row may list among its required or optional inputs. */
export type VideoInputParam =
  'negative_prompt' | 'image' | 'end_image' | 'images' | 'videos' | 'audios' | 'audio' | 'audio_enable' | 'aspect_ratio' | 'prompt_extend' | 'extra';

export type VideoArrayParam = 'images' | 'videos' | 'audios';

export interface Range {
  readonly min: number;
  readonly max: number;
}

export interface ItemCount {
  readonly min?: number;
  readonly max: number;
}

export interface VideoModelRow {
  readonly id: string;
  readonly kind: 'video';
  readonly summary: string;
  readonly displayName?: string;
  /** What the model does and takes, in a few sentences; the listing adds its ranges (names.ts). */
  readonly description?: string;
  /** The vendor's model family the console groups by; absent: derived from the id (names.ts). */
  readonly family?: string;
  /** Inputs required besides `model` and `prompt`. */
  readonly required: readonly VideoInputParam[];
  readonly optional: readonly VideoInputParam[];
  /** Seconds; null when the seed does not show the range (any positive integer). Default is 5. */
  readonly duration: Range | null;
  /** Null when the seed does not show the values (any non-empty string, no default). */
  readonly resolution: { readonly values: readonly string[]; readonly default: string } | null;
  /** Applies only when `aspect_ratio` is accepted; null when the values are not shown. */
  readonly aspectRatio: { readonly values: readonly string[]; readonly default?: string } | null;
  /** Inclusive bounds; a missing bound is unbounded. `{}` accepts any integer. */
  readonly seed: { readonly min?: number; readonly max?: number };
  readonly items?: Partial<Record<VideoArrayParam, ItemCount>>;
  /** Seed rule 1: at least one of these arrays must hold an item (reported as missing `images`). */
  readonly atLeastOneOf?: readonly VideoArrayParam[];
  readonly defaults?: { readonly audio_enable?: boolean };
  /** Seed rule 3: limits on the input `image` (type, bytes, pixels, aspect ratio). */
  readonly imageRule3?: boolean;
  /** Seed rule 2: the whole request body must not exceed this many bytes. */
  readonly maxBodyBytes?: number;
  /** Seed rule 2: `extra.image_options` aligned with `images`. */
  readonly imageOptions?: { readonly refNameMaxBytes: number };
  /** A model of MEDIAGATE_MODELS_FILE: its parameters as the operator declared them (declared.ts). */
  readonly declared?: DeclaredParams;
  readonly lifecycle?: Lifecycle;
}

export interface ImageModelRow {
  readonly id: string;
  readonly kind: 'image';
  readonly summary: string;
  readonly displayName?: string;
  readonly description?: string;
  readonly family?: string;
  /** Pixel bounds of each side, for `size`, `width` and `height`. */
  readonly side: Range;
  readonly defaults: { readonly width: number; readonly height: number; readonly prompt_extend: boolean };
  readonly seed: { readonly min: number; readonly max?: number; readonly nullable: boolean };
  readonly promptExtendNullable: boolean;
  readonly declared?: DeclaredParams;
  readonly lifecycle?: Lifecycle;
}

/** A declared parameter's type: `media` is one media input, `size` a `WxH` string. */
export type DeclaredType = 'string' | 'integer' | 'number' | 'boolean' | 'media' | 'media[]' | 'size';
export type MediaKind = 'image' | 'video' | 'audio';

/** One parameter of a declared model, as the models file says it (docs/guides/models.md). */
export interface DeclaredParam {
  readonly type: DeclaredType;
  readonly required: boolean;
  readonly default?: string | number | boolean;
  readonly enum?: readonly (string | number)[];
  readonly minimum?: number;
  readonly maximum?: number;
  readonly maxLength?: number;
  readonly media?: MediaKind;
  readonly maxItems?: number;
  readonly requires?: readonly string[];
  readonly minSide?: number;
  readonly maxSide?: number;
}

export type DeclaredParams = Readonly<Record<string, DeclaredParam>>;

/** When a model stops being recommended and when it stops being offered (Unix milliseconds). */
export interface Lifecycle {
  readonly deprecatedAt?: number;
  readonly retiresAt?: number;
  readonly successor?: string;
}

export type ModelRow = VideoModelRow | ImageModelRow;
export type ModelKind = ModelRow['kind'];

/** Parameters after validation, with defaults applied; this is what is stored on the task. */
export type ResolvedParams = Readonly<Record<string, unknown>>;
