import { shortSide, videoSize } from '../catalog/geometry.js';
import type { JsonSchema } from '../catalog/index.js';
import { validationError, type ApiError } from '../errors.js';

/** What a video model says of its geometry, read from its JSON Schema (built-in or declared alike). */
export interface Geometry {
  /** The model's resolutions; null when it takes any (`Np` then). */
  readonly resolutions: readonly string[] | null;
  /** Whether it takes `aspect_ratio`, and which (null: any ratio). Not taken: it renders 16:9. */
  readonly aspectRatios: readonly string[] | null | 'not accepted';
}

const DEFAULT_RATIO = '16:9';
const SIZE = /^([1-9]\d{0,4})x([1-9]\d{0,4})$/;

function enumOf(property: unknown): readonly string[] | null {
  if (typeof property !== 'object' || property === null) return null;
  const values = (property as { enum?: unknown }).enum;
  return Array.isArray(values) ? values.filter((value): value is string => typeof value === 'string') : null;
}

export function geometryOf(schema: JsonSchema): Geometry {
  const properties = (schema['properties'] ?? {}) as Record<string, unknown>;
  return {
    resolutions: enumOf(properties['resolution']),
    aspectRatios: 'aspect_ratio' in properties ? enumOf(properties['aspect_ratio']) : 'not accepted',
  };
}

const gcd = (a: number, b: number): number => (b === 0 ? a : gcd(b, a % b));

/** The sizes a model renders, for a message: each resolution at each ratio (at most a dozen shown). */
function renderable(geometry: Geometry): string[] {
  const ratios = geometry.aspectRatios === 'not accepted' ? [DEFAULT_RATIO] : (geometry.aspectRatios ?? ['16:9', '9:16', '1:1']);
  const resolutions = geometry.resolutions ?? ['720p', '1080p'];
  const sizes = resolutions.flatMap((resolution) =>
    ratios
      .filter((ratio) => ratio !== 'adaptive')
      .map((ratio) => {
        const { width, height } = videoSize(resolution, ratio);
        return `${width}x${height}`;
      }),
  );
  return [...new Set(sizes)].slice(0, 12);
}

/**
 * `size` (`WxH`) -> the model's `resolution` and `aspect_ratio`: the pair whose output is exactly
 * that size (1280x720 -> 720p 16:9, 720x1280 -> 720p 9:16, 1920x1080 -> 1080p 16:9); a square
 * size -> the model's resolution nearest to it at 1:1 (1024x1024 -> 1080p 1:1 where 1080p is
 * the nearest). `aspect_ratio` is left out for a model that does not take it (it renders 16:9).
 * Anything else the model cannot render: 400 on `size`.
 */
export function mapSize(size: unknown, geometry: Geometry): { resolution: string; aspect_ratio?: string } | ApiError {
  if (typeof size !== 'string') return validationError('invalid_parameter', 'size', `'size' must be a string 'WIDTHxHEIGHT'; got ${typeof size}.`);
  const match = SIZE.exec(size);
  if (!match) return validationError('invalid_parameter', 'size', `'size' must be of the form 'WIDTHxHEIGHT' (e.g. '1280x720'); got '${size.slice(0, 40)}'.`);
  const width = Number(match[1]);
  const height = Number(match[2]);
  const divisor = gcd(width, height);
  const exactRatio = `${width / divisor}:${height / divisor}`;
  const ratios = geometry.aspectRatios === 'not accepted' ? [DEFAULT_RATIO] : (geometry.aspectRatios ?? [exactRatio]);
  const short = Math.min(width, height);
  const resolutions = geometry.resolutions ?? [`${short}p`];
  const withRatio = (resolution: string, ratio: string) => (geometry.aspectRatios === 'not accepted' ? { resolution } : { resolution, aspect_ratio: ratio });
  for (const ratio of ratios) {
    if (ratio === 'adaptive') continue;
    for (const resolution of resolutions) {
      const out = videoSize(resolution, ratio);
      if (out.width === width && out.height === height) return withRatio(resolution, ratio);
    }
  }
  if (width === height && ratios.includes('1:1')) {
    let nearest: string | undefined;
    for (const resolution of resolutions) {
      if (nearest === undefined || Math.abs(shortSide(resolution) - short) < Math.abs(shortSide(nearest) - short)) nearest = resolution;
    }
    if (nearest !== undefined) return withRatio(nearest, '1:1');
  }
  return validationError('unsupported_value', 'size', `This model cannot render ${width}x${height}; it renders ${renderable(geometry).join(', ')}.`);
}
