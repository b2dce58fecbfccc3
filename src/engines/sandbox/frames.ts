/**
 * Key frames as raw RGB (what ffmpeg reads without any decoder): the input image scaled and
 * cropped to fill the frame, or a gradient in the request's colours.
 */
import sharp, { type Sharp } from 'sharp';
import { EngineError } from '../types.js';
import { userImageInput, type LoadedImage } from './inputs.js';
import type { Palette } from './palette.js';

export interface RawFrame {
  readonly data: Buffer;
  readonly width: number;
  readonly height: number;
  readonly channels: 3;
}

async function toRgbFrame(image: Sharp, width: number, height: number): Promise<RawFrame> {
  const { data, info } = await image.raw().toBuffer({ resolveWithObject: true });
  if (info.width !== width || info.height !== height || info.channels !== 3) {
    throw new Error(`frame came out ${info.width}x${info.height}x${info.channels}, expected ${width}x${height}x3`);
  }
  return { data, width, height, channels: 3 };
}

/** The input image oriented, scaled and centre-cropped to exactly width x height. */
export async function coverFrame(input: LoadedImage, width: number, height: number, maxInputPixels: number): Promise<RawFrame> {
  try {
    const image = sharp(input.bytes, userImageInput(maxInputPixels))
      .autoOrient()
      .resize(width, height, { fit: 'cover', position: 'centre' })
      // Transparent areas become black, as a video has no alpha; grey or CMYK become sRGB.
      .flatten({ background: '#000000' })
      .toColourspace('srgb')
      .removeAlpha();
    return await toRgbFrame(image, width, height);
  } catch (error) {
    throw new EngineError('invalid_input', input.field, `${input.field} could not be decoded as an image`, { cause: error });
  }
}

/** A four-corner gradient: a 2x2 image stretched with bilinear interpolation (cheaper than SVG at 4k). */
export function gradientImage(palette: Palette, width: number, height: number): Sharp {
  const corners = Buffer.from(palette.corners.flat());
  return sharp(corners, { raw: { width: 2, height: 2, channels: 3 } }).resize(width, height, {
    fit: 'fill',
    kernel: 'linear',
  });
}

export async function gradientFrame(palette: Palette, width: number, height: number): Promise<RawFrame> {
  return toRgbFrame(gradientImage(palette, width, height), width, height);
}
