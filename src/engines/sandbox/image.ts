/**
 * One image render: a PNG of exactly the resolved width x height, gradient plus caption, all in
 * sharp (no ffmpeg).
 */
import { join } from 'node:path';
import sharp from 'sharp';
import type { RenderJob, RenderedFile } from '../types.js';
import { gradientImage } from './frames.js';
import { MAX_FRAME_SIDE, type ResolvedSandboxOptions } from './options.js';
import { paletteFor } from './palette.js';
import { readImageRequest } from './params.js';
import { renderCaption } from './text.js';

export async function renderImage(job: RenderJob, options: ResolvedSandboxOptions): Promise<RenderedFile> {
  const request = readImageRequest(job.params, MAX_FRAME_SIDE);
  const { width, height } = request;
  const caption = await renderCaption(request.prompt, width, height, { fontFile: options.fontFile, log: options.log });
  // Flattened to a buffer first: sharp applies composite before resize in one pipeline.
  const background = await gradientImage(paletteFor(request.prompt, request.seed), width, height).raw().toBuffer();
  const output = join(job.workDir, 'image.png');
  await sharp(background, { raw: { width, height, channels: 3 } })
    .composite([{ input: caption.data, raw: { width: caption.width, height: caption.height, channels: 4 }, left: caption.left, top: caption.top }])
    .png({ compressionLevel: 6 })
    .toFile(output);
  return { path: output, type: 'image', contentType: 'image/png', ext: 'png' };
}
