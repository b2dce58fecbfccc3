import type { DeclaredParam, ImageModelRow, ModelRow, VideoInputParam, VideoModelRow } from './types.js';

/**
 * Row -> JSON Schema (draft 2020-12 subset understood by Ajv 8). The same schema validates
 * requests, is published by `GET /v1/models` and is embedded in the OpenAPI document, so what a
 * client reads is what the server enforces.
 *
 * `format: "media-input"` is ours: an `https://` URL or a Base64 data URL (`data:<mime>;base64,...`).
 */

export type JsonSchema = { readonly [key: string]: unknown };

export const MEDIA_FORMAT = 'media-input';

/**
 * How long a text or URL parameter may be. A body may be 32 MiB, and every byte of a value that
 * is not a data URL lands in the task row (data URLs are stored as files): these keep a row
 * small (tens of KB at most) whatever the body. The seed does not show a prompt limit; these
 * are ours, well above what providers accept, and published in each model's JSON Schema
 * (`maxLength`; `x-url-max-length` on media inputs, whose data URLs are bounded by the body).
 */
export const INPUT_LIMITS = {
  /** An `https://` media input, in characters (the common browser and CDN bound). */
  urlChars: 2048,
  /** `prompt`, in characters (code points). */
  promptChars: 10_000,
  /** `negative_prompt`, in characters. */
  negativePromptChars: 10_000,
  /** `resolution` or `aspect_ratio` where the seed does not list the values. */
  freeValueChars: 64,
  /** `extra.image_options[].ref_name`, in characters (a row's byte rule may be stricter). */
  refNameChars: 256,
  /**
   * `duration` in seconds where the seed lists no range (checked upstream): a day, far past what
   * any provider renders, and small enough that a price per second times it stays an exact
   * integer of micro-units (a cost is never computed from an unbounded number).
   */
  freeDurationS: 86_400,
} as const;

/**
 * Every integer parameter has both bounds in its schema: where the seed gives none, the widest
 * exact integers, so no number a client sends (9e15, 1e300) reaches arithmetic unbounded.
 */
const SAFE = { min: -Number.MAX_SAFE_INTEGER, max: Number.MAX_SAFE_INTEGER } as const;

/** Our JSON Schema keyword: the longest `https://` URL a media input may be (data URLs excepted). */
export const URL_MAX_LENGTH_KEYWORD = 'x-url-max-length';

const mediaString = (description: string): JsonSchema => ({
  type: 'string',
  format: MEDIA_FORMAT,
  [URL_MAX_LENGTH_KEYWORD]: INPUT_LIMITS.urlChars,
  description: `${description} An https:// URL (at most ${INPUT_LIMITS.urlChars} characters) or a Base64 data URL.`,
});

const nonBlankPrompt: JsonSchema = {
  type: 'string',
  pattern: '\\S',
  maxLength: INPUT_LIMITS.promptChars,
  description: `Text prompt describing the desired output; must not be empty or only whitespace; at most ${INPUT_LIMITS.promptChars} characters.`,
};

const DESCRIPTIONS: Record<VideoInputParam, string> = {
  negative_prompt: 'Content to avoid.',
  image: 'Primary input or first-frame image.',
  end_image: 'End-frame image.',
  images: 'Reference images.',
  videos: 'Reference videos.',
  audios: 'Reference audio clips.',
  audio: 'Single input audio.',
  audio_enable: 'Whether to generate audio together with the video.',
  aspect_ratio: 'Output aspect ratio.',
  prompt_extend: 'Whether the model channel expands or enhances the prompt before generation.',
  extra: 'Extra options.',
};

function inputSchema(row: VideoModelRow, param: VideoInputParam): JsonSchema {
  const description = DESCRIPTIONS[param];
  switch (param) {
    case 'image':
    case 'end_image':
    case 'audio':
      return mediaString(description);
    case 'images':
    case 'videos':
    case 'audios': {
      const count = row.items?.[param];
      return {
        type: 'array',
        items: { type: 'string', format: MEDIA_FORMAT, [URL_MAX_LENGTH_KEYWORD]: INPUT_LIMITS.urlChars },
        ...(count?.min !== undefined ? { minItems: count.min } : {}),
        ...(count ? { maxItems: count.max } : {}),
        description: `${description} Items are https:// URLs (at most ${INPUT_LIMITS.urlChars} characters) or Base64 data URLs.`,
      };
    }
    case 'negative_prompt':
      return {
        type: 'string',
        maxLength: INPUT_LIMITS.negativePromptChars,
        description: `${description} At most ${INPUT_LIMITS.negativePromptChars} characters.`,
      };
    case 'audio_enable':
      return {
        type: 'boolean',
        description,
        ...(row.defaults?.audio_enable !== undefined ? { default: row.defaults.audio_enable } : {}),
      };
    case 'prompt_extend':
      return { type: 'boolean', description };
    case 'aspect_ratio':
      return row.aspectRatio
        ? {
            type: 'string',
            enum: row.aspectRatio.values,
            ...(row.aspectRatio.default !== undefined ? { default: row.aspectRatio.default } : {}),
            description,
          }
        : {
            type: 'string',
            minLength: 1,
            maxLength: INPUT_LIMITS.freeValueChars,
            description: `${description} Values are checked by the upstream provider.`,
          };
    case 'extra':
      return {
        type: 'object',
        additionalProperties: false,
        properties: {
          image_options: {
            type: 'array',
            description: 'Aligned by position with `images`; not longer than `images`.',
            items: {
              type: 'object',
              additionalProperties: false,
              properties: {
                type: { type: 'string', enum: ['subject', 'background'] },
                ref_name: {
                  type: 'string',
                  maxLength: INPUT_LIMITS.refNameChars,
                  description: `At most ${row.imageOptions?.refNameMaxBytes ?? 30} UTF-8 bytes.`,
                },
              },
            },
          },
        },
        description,
      };
  }
}

/** What a declared parameter's name means here; other names go to the route's upstream as declared. */
const DECLARED_DESCRIPTIONS: Readonly<Record<string, string>> = {
  ...DESCRIPTIONS,
  prompt: 'Text prompt describing the desired output; must not be empty or only whitespace.',
  duration: 'Video length in seconds.',
  resolution: 'Output resolution.',
  seed: 'Random seed.',
  size: 'Output size, WIDTHxHEIGHT in pixels.',
};

const MEDIA_WORDS = { image: 'An image', video: 'A video', audio: 'An audio clip' } as const;

function declaredParamSchema(name: string, spec: DeclaredParam): JsonSchema {
  const description = DECLARED_DESCRIPTIONS[name] ?? 'Passed to the upstream as declared.';
  const fallback = spec.default === undefined ? {} : { default: spec.default };
  switch (spec.type) {
    case 'media':
      return mediaString(`${description}${spec.media ? ` ${MEDIA_WORDS[spec.media]}.` : ''}`);
    case 'media[]':
      return {
        type: 'array',
        items: { type: 'string', format: MEDIA_FORMAT, [URL_MAX_LENGTH_KEYWORD]: INPUT_LIMITS.urlChars },
        ...(spec.maxItems === undefined ? {} : { maxItems: spec.maxItems }),
        description: `${description}${spec.media ? ` ${MEDIA_WORDS[spec.media]} each.` : ''} Items are https:// URLs (at most ${INPUT_LIMITS.urlChars} characters) or Base64 data URLs.`,
      };
    case 'size': {
      const sides = spec.minSide !== undefined || spec.maxSide !== undefined ? ` Each side ${spec.minSide ?? 1}-${spec.maxSide ?? '…'}.` : '';
      return { type: 'string', pattern: '^[0-9]{1,6}x[0-9]{1,6}$', ...fallback, description: `${description}${sides}` };
    }
    case 'boolean':
      return { type: 'boolean', ...fallback, description };
    case 'integer':
    case 'number':
      return {
        type: spec.type,
        ...(spec.enum === undefined ? {} : { enum: spec.enum }),
        ...(spec.minimum === undefined ? {} : { minimum: spec.minimum }),
        ...(spec.maximum === undefined ? {} : { maximum: spec.maximum }),
        ...fallback,
        description,
      };
    case 'string':
      // A string without a declared limit keeps a task row small all the same (INPUT_LIMITS).
      return {
        type: 'string',
        ...(name === 'prompt' ? { pattern: '\\S' } : {}),
        ...(spec.enum === undefined ? { maxLength: spec.maxLength ?? INPUT_LIMITS.promptChars } : { enum: spec.enum }),
        ...fallback,
        description,
      };
  }
}

/** A declared model's schema: exactly its declared parameters, besides `model`. */
function declaredRequestSchema(row: ModelRow, params: Readonly<Record<string, DeclaredParam>>): JsonSchema {
  const properties: Record<string, JsonSchema> = { model: { type: 'string', const: row.id, description: 'Model identifier.' } };
  for (const [name, spec] of Object.entries(params)) properties[name] = declaredParamSchema(name, spec);
  return {
    $id: `mediagate:${row.kind}:${row.id}`,
    title: row.id,
    description: row.summary,
    type: 'object',
    additionalProperties: false,
    required: ['model', ...Object.keys(params).filter((name) => params[name]?.required === true)],
    properties,
  };
}

export function videoRequestSchema(row: VideoModelRow): JsonSchema {
  if (row.declared) return declaredRequestSchema(row, row.declared);
  const properties: Record<string, JsonSchema> = {
    model: { type: 'string', const: row.id, description: 'Model identifier.' },
    prompt: nonBlankPrompt,
    duration: row.duration
      ? { type: 'integer', minimum: row.duration.min, maximum: row.duration.max, default: 5, description: 'Video length in seconds.' }
      : {
          type: 'integer',
          minimum: 1,
          maximum: INPUT_LIMITS.freeDurationS,
          default: 5,
          description: `Video length in seconds; at most ${INPUT_LIMITS.freeDurationS}, the model's own range is checked upstream.`,
        },
    resolution: row.resolution
      ? { type: 'string', enum: row.resolution.values, default: row.resolution.default, description: 'Output resolution.' }
      : { type: 'string', minLength: 1, maxLength: INPUT_LIMITS.freeValueChars, description: 'Output resolution; the values are checked upstream.' },
    seed: {
      type: 'integer',
      minimum: row.seed.min ?? SAFE.min,
      maximum: row.seed.max ?? SAFE.max,
      description: 'Random seed; -1 means a random result.',
    },
  };
  for (const param of [...row.required, ...row.optional]) properties[param] = inputSchema(row, param);
  return {
    $id: `mediagate:video:${row.id}`,
    title: row.id,
    description: row.summary,
    type: 'object',
    additionalProperties: false,
    required: ['model', 'prompt', ...row.required],
    properties,
  };
}

export function imageRequestSchema(row: ImageModelRow): JsonSchema {
  if (row.declared) return declaredRequestSchema(row, row.declared);
  const side = { type: 'integer', minimum: row.side.min, maximum: row.side.max };
  return {
    $id: `mediagate:image:${row.id}`,
    title: row.id,
    description: row.summary,
    type: 'object',
    additionalProperties: false,
    required: ['model', 'prompt'],
    properties: {
      model: { type: 'string', const: row.id, description: 'Model identifier.' },
      prompt: nonBlankPrompt,
      size: {
        type: 'string',
        pattern: '^[0-9]{1,6}x[0-9]{1,6}$',
        description: `WIDTHxHEIGHT, each ${row.side.min}-${row.side.max}; not together with width or height.`,
      },
      width: { ...side, default: row.defaults.width, description: 'Width in pixels.' },
      height: { ...side, default: row.defaults.height, description: 'Height in pixels.' },
      seed: {
        type: row.seed.nullable ? ['integer', 'null'] : 'integer',
        minimum: row.seed.min,
        maximum: row.seed.max ?? SAFE.max,
        description: 'Omit or 0 for a random result; a positive value is reproducible.',
      },
      prompt_extend: {
        type: row.promptExtendNullable ? ['boolean', 'null'] : 'boolean',
        default: row.defaults.prompt_extend,
        description: 'Whether the prompt is expanded before generation.',
      },
      output_format: { type: 'string', enum: ['png'], default: 'png', description: 'Only png.' },
      n: { type: 'integer', enum: [1], default: 1, description: 'Number of images; only 1.' },
    },
  };
}
