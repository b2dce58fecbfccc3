/**
 * Loads the image inputs of a video task (data URL or https URL) and reads their size with
 * sharp. User bytes go to sharp only, and only in the raster formats a model accepts: never to
 * ffmpeg, and never to sharp's SVG/PDF/TIFF loaders.
 */
import sharp, { type Metadata, type SharpOptions } from 'sharp';
import { checkMediaString } from '../../media/data-url.js';
import { loadMediaInput, type FetchOptions } from '../../media/fetcher.js';
import { FetchError } from '../../outbound/client.js';
import { checkRule3Image, readImageHeader } from '../../media/image-header.js';
import { EngineError } from '../types.js';

export type ImageField = 'image' | 'end_image';

export interface LoadedImage {
  readonly field: ImageField;
  readonly bytes: Buffer;
  /** Size after EXIF orientation, as it will appear on the frame. */
  readonly width: number;
  readonly height: number;
}

export interface LoadContext {
  readonly fetch: FetchOptions;
  /** Inputs the fetch stage already fetched, by URL (`Engine.fetchInputs`). */
  readonly fetched?: ReadonlyMap<string, Buffer>;
  readonly signal: AbortSignal;
  /** Seed rule 3 applies to `image` fetched from a URL (data URLs were checked at creation). */
  readonly checkRule3: boolean;
  readonly maxInputPixels: number;
  /** The bytes of an input the gateway stored (RenderJob.readInput). */
  readonly readInput?: (value: string) => Promise<Buffer | undefined>;
}

const ACCEPTED_FORMATS = new Set(['png', 'jpeg', 'gif', 'webp']);

/** Options for every sharp instance that reads user bytes. */
export function userImageInput(maxInputPixels: number): SharpOptions {
  return { failOn: 'error', limitInputPixels: maxInputPixels, animated: false };
}

/** A failed fetch (or address check) of an input, as the task's failure naming the field. */
export function fetchFailure(field: string, error: FetchError): EngineError {
  const what: Record<FetchError['reason'], string> = {
    bad_url: 'is not a URL that can be fetched',
    too_large: 'is larger than the engine accepts',
    timeout: 'could not be fetched in time',
    http_status: `could not be fetched (HTTP ${error.status ?? 'error'})`,
    too_many_redirects: 'redirects too many times',
    network: 'could not be fetched (connection failed)',
    aborted: 'fetch was aborted',
    refused: 'points to an address that is not public (loopback, private, link-local, metadata...); only public hosts are fetched',
  };
  // A refusal is policy, not a network accident: its own code, so a client knows not to retry.
  const code = error.reason === 'refused' ? 'input_refused' : 'input_fetch_failed';
  return new EngineError(code, field, `${field} ${what[error.reason]}`, { cause: error });
}

async function loadBytes(field: ImageField, value: string, ctx: LoadContext): Promise<{ bytes: Buffer; fromUrl: boolean }> {
  // A stored input was a data URL checked at creation: read from disk, never decoded again here.
  let stored: Buffer | undefined;
  try {
    stored = await ctx.readInput?.(value);
  } catch (error) {
    throw new EngineError('invalid_input', field, `${field} could not be read from storage`, { cause: error });
  }
  if (stored !== undefined) return { bytes: stored, fromUrl: false };
  const check = checkMediaString(value);
  if (!check.ok) throw new EngineError('invalid_input', field, `${field} ${check.reason}`);
  const fetched = check.kind === 'https' ? ctx.fetched?.get(value) : undefined;
  if (fetched !== undefined) return { bytes: fetched, fromUrl: true };
  try {
    const { bytes } = await loadMediaInput(value, { ...ctx.fetch, signal: ctx.signal });
    return { bytes, fromUrl: check.kind === 'https' };
  } catch (error) {
    if (ctx.signal.aborted) throw ctx.signal.reason;
    if (!(error instanceof FetchError)) throw error;
    // A data URL never touched the network: whatever is wrong with it is wrong with the input.
    if (check.kind === 'data') throw new EngineError('invalid_input', field, `${field} could not be decoded`, { cause: error });
    throw fetchFailure(field, error);
  }
}

/** Loads one image input, checks what must be checked before decoding, and reads its size. */
export async function loadImage(field: ImageField, value: string, ctx: LoadContext): Promise<LoadedImage> {
  const { bytes, fromUrl } = await loadBytes(field, value, ctx);
  if (ctx.checkRule3 && field === 'image' && fromUrl) {
    const problem = checkRule3Image(bytes);
    if (problem !== null) throw new EngineError('unsupported_value', 'image', `image ${problem}`);
  }
  // Sniff before sharp sees the bytes: its SVG, PDF and TIFF loaders are not for user input.
  if (!ACCEPTED_FORMATS.has(readImageHeader(bytes).format)) {
    throw new EngineError('invalid_input', field, `${field} must be a PNG, JPEG, GIF or WebP image`);
  }
  let meta: Metadata;
  try {
    meta = await sharp(bytes, userImageInput(ctx.maxInputPixels)).metadata();
  } catch (error) {
    throw new EngineError('invalid_input', field, `${field} could not be decoded as an image`, { cause: error });
  }
  const { width, height } = meta.autoOrient;
  if (!ACCEPTED_FORMATS.has(meta.format) || !(width > 0) || !(height > 0)) {
    throw new EngineError('invalid_input', field, `${field} could not be decoded as an image`);
  }
  if (width * height > ctx.maxInputPixels) {
    throw new EngineError('invalid_input', field, `${field} is ${width}x${height} pixels; at most ${ctx.maxInputPixels} pixels are decoded`);
  }
  return { field, bytes, width, height };
}

/**
 * Loads `image` and `end_image` side by side; when both fail, the error names `image`, the
 * field a client reads first.
 */
export async function loadImages(
  inputs: { readonly image: string | undefined; readonly endImage: string | undefined },
  ctx: LoadContext,
): Promise<{ image: LoadedImage | null; endImage: LoadedImage | null }> {
  const [image, endImage] = await Promise.allSettled([
    inputs.image === undefined ? null : loadImage('image', inputs.image, ctx),
    inputs.endImage === undefined ? null : loadImage('end_image', inputs.endImage, ctx),
  ]);
  if (image.status === 'rejected') throw image.reason;
  if (endImage.status === 'rejected') throw endImage.reason;
  return { image: image.value, endImage: endImage.value };
}

/** The image fields a video render loads, and their `https://` values (the fetch stage's work). */
export function httpsImageInputs(params: Readonly<Record<string, unknown>>): { field: ImageField; url: string }[] {
  const found: { field: ImageField; url: string }[] = [];
  for (const field of ['image', 'end_image'] as const) {
    const value = params[field];
    if (typeof value !== 'string') continue;
    const check = checkMediaString(value);
    if (check.ok && check.kind === 'https') found.push({ field, url: value });
  }
  return found;
}

/**
 * Fetches the `https://` image inputs of a video task ahead of its render (the worker pool's
 * fetch stage): the bytes by URL. The checks on the bytes stay in `loadImage`, at the render.
 */
export async function fetchImageInputs(
  params: Readonly<Record<string, unknown>>,
  ctx: { readonly fetch: FetchOptions; readonly signal: AbortSignal },
): Promise<Map<string, Buffer>> {
  const inputs = httpsImageInputs(params);
  const results = await Promise.allSettled(
    inputs.map(async ({ field, url }) => {
      try {
        return (await loadMediaInput(url, { ...ctx.fetch, signal: ctx.signal })).bytes;
      } catch (error) {
        if (ctx.signal.aborted) throw ctx.signal.reason;
        throw error instanceof FetchError ? fetchFailure(field, error) : error;
      }
    }),
  );
  const fetched = new Map<string, Buffer>();
  // As loadImages: when both fail, the error names `image`, the field a client reads first.
  results.forEach((result, index) => {
    if (result.status === 'rejected') throw result.reason;
    const input = inputs[index];
    if (input) fetched.set(input.url, result.value);
  });
  return fetched;
}
