/**
 * Typed views of the resolved parameters. Validation already ran when the task was created, so
 * a value of the wrong type here means a stored task from an older version or a bug: it fails
 * the task with the parameter named rather than rendering something the client did not ask for.
 */
import { EngineError, type ResolvedParams } from '../types.js';

export interface VideoRequest {
  readonly prompt: string;
  readonly durationS: number;
  readonly resolution: string | undefined;
  readonly aspectRatio: string | undefined;
  readonly audio: boolean;
  readonly seed: number | undefined;
  readonly image: string | undefined;
  readonly endImage: string | undefined;
}

export interface ImageRequest {
  readonly prompt: string;
  readonly width: number;
  readonly height: number;
  readonly seed: number | undefined;
}

const DEFAULT_DURATION_S = 5;
const DEFAULT_IMAGE_SIDE = 1024;

function optionalString(params: ResolvedParams, name: string): string | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new EngineError('invalid_input', name, `${name} must be a string`);
  return value;
}

function optionalInteger(params: ResolvedParams, name: string): number | undefined {
  const value = params[name];
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'number' || !Number.isSafeInteger(value)) {
    throw new EngineError('invalid_input', name, `${name} must be an integer`);
  }
  return value;
}

export function readVideoRequest(params: ResolvedParams, maxDurationS: number): VideoRequest {
  const durationS = optionalInteger(params, 'duration') ?? DEFAULT_DURATION_S;
  if (durationS < 1 || durationS > maxDurationS) {
    throw new EngineError('unsupported_value', 'duration', `duration ${durationS} is outside 1..${maxDurationS} seconds for this engine`);
  }
  return {
    prompt: optionalString(params, 'prompt') ?? '',
    durationS,
    resolution: optionalString(params, 'resolution'),
    aspectRatio: optionalString(params, 'aspect_ratio'),
    audio: params['audio_enable'] === true,
    seed: optionalInteger(params, 'seed'),
    image: optionalString(params, 'image'),
    endImage: optionalString(params, 'end_image'),
  };
}

/** `WIDTHxHEIGHT` -> sides; null when malformed. */
function parseSize(size: string | undefined): { width: number; height: number } | null {
  const match = size === undefined ? null : /^(\d{1,5})x(\d{1,5})$/.exec(size);
  return match ? { width: Number(match[1]), height: Number(match[2]) } : null;
}

export function readImageRequest(params: ResolvedParams, maxSide: number): ImageRequest {
  // width/height are resolved before the engine runs; `size` is read only for older tasks.
  const size = parseSize(optionalString(params, 'size'));
  const width = optionalInteger(params, 'width') ?? size?.width ?? DEFAULT_IMAGE_SIDE;
  const height = optionalInteger(params, 'height') ?? size?.height ?? DEFAULT_IMAGE_SIDE;
  for (const [name, side] of [
    ['width', width],
    ['height', height],
  ] as const) {
    if (side < 1 || side > maxSide) {
      throw new EngineError('unsupported_value', name, `${name} ${side} is outside 1..${maxSide} pixels for this engine`);
    }
  }
  return { prompt: optionalString(params, 'prompt') ?? '', width, height, seed: optionalInteger(params, 'seed') };
}
