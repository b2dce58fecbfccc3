/**
 * One video render: inputs -> geometry -> key frames -> ffmpeg -> `video.mp4` in the workDir.
 */
import { rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { resolveAspect, videoSize } from '../../catalog/geometry.js';
import type { FetchOptions } from '../../media/fetcher.js';
import { EngineError, type RenderJob, type RenderedFile } from '../types.js';
import { buildVideoArgs } from './ffmpeg-args.js';
import { coverFrame, gradientFrame } from './frames.js';
import { loadImages } from './inputs.js';
import { MAX_FRAME_PIXELS, MAX_FRAME_SIDE, type ResolvedSandboxOptions } from './options.js';
import { hex, paletteFor } from './palette.js';
import { readVideoRequest } from './params.js';
import type { PixelBudget } from './pixel-budget.js';
import type { ProgressReporter } from './progress.js';
import { runFfmpeg } from './run-ffmpeg.js';
import { RenderCache } from './render-cache.js';
import { renderCaption } from './text.js';

/** Share of the progress bar spent before ffmpeg starts (fetching, decoding, key frames). */
const PREPARED = 5;

export interface VideoContext {
  readonly options: ResolvedSandboxOptions;
  readonly fetch: Omit<FetchOptions, 'signal'>;
  /** The job's signal combined with the render deadline. */
  readonly signal: AbortSignal;
  readonly progress: ProgressReporter;
  /** The process's budget of decoded pixels, held while the input images are decoded. */
  readonly decodeBudget: PixelBudget;
  /** Finished renders by content; absent: every render encodes. */
  readonly cache?: RenderCache;
}

export async function renderVideo(job: RenderJob, ctx: VideoContext): Promise<RenderedFile> {
  const { options, signal, progress } = ctx;
  const request = readVideoRequest(job.params, options.maxDurationS);
  const images = await loadImages(request, {
    fetch: ctx.fetch,
    ...(job.inputs ? { fetched: job.inputs } : {}),
    signal,
    checkRule3: job.model.checkImageRule3,
    maxInputPixels: options.maxInputPixels,
    ...(job.readInput === undefined ? {} : { readInput: job.readInput }),
  });
  signal.throwIfAborted();
  progress.report(2);

  // decisions §6: the aspect follows the input image; an end image alone stands in for it.
  const aspect = resolveAspect(request.aspectRatio, job.model.aspectRatios, images.image ?? images.endImage);
  const { width, height } = videoSize(request.resolution, aspect);
  if (width > MAX_FRAME_SIDE || height > MAX_FRAME_SIDE || width * height > MAX_FRAME_PIXELS) {
    throw new EngineError(
      'unsupported_value',
      'aspect_ratio',
      `aspect ratio ${aspect} at this resolution gives ${width}x${height}, larger than the engine renders`,
    );
  }

  const palette = paletteFor(request.prompt, request.seed);
  const output = join(job.workDir, 'video.mp4');
  const cacheKey = RenderCache.key(
    // Per key: a hit is faster than a render, so a shared cache would tell one key what
    // another rendered.
    { v: 1, owner: job.owner, width, height, durationS: request.durationS, fps: options.fps, audio: request.audio, prompt: request.prompt, palette },
    [images.image?.bytes, images.endImage?.bytes],
  );
  if (ctx.cache && (await ctx.cache.fetch(cacheKey, 'mp4', output))) {
    return { path: output, type: 'video', contentType: 'video/mp4', ext: 'mp4' };
  }
  // The pixels come from the headers (loadImages); both images are taken at once, so two
  // renders never each hold one and wait for the other's.
  const decodePixels = [images.image, images.endImage].reduce((sum, image) => sum + (image ? image.width * image.height : 0), 0);
  const decodeFrames = () =>
    Promise.all([
      images.image ? coverFrame(images.image, width, height, options.maxInputPixels) : gradientFrame(palette, width, height),
      images.endImage ? coverFrame(images.endImage, width, height, options.maxInputPixels) : null,
    ]);
  const [[start, end], caption] = await Promise.all([
    decodePixels > 0 ? ctx.decodeBudget.with(decodePixels, signal, decodeFrames) : decodeFrames(),
    renderCaption(request.prompt, width, height, { fontFile: options.fontFile, log: options.log }),
  ]);
  signal.throwIfAborted();

  const scratch = {
    start: join(job.workDir, 'sandbox-start.rgb'),
    end: join(job.workDir, 'sandbox-end.rgb'),
    caption: join(job.workDir, 'sandbox-caption.rgba'),
  };
  try {
    await Promise.all([writeFile(scratch.start, start.data), end ? writeFile(scratch.end, end.data) : undefined, writeFile(scratch.caption, caption.data)]);
    progress.report(PREPARED);
    const totalMicros = request.durationS * 1e6;
    await runFfmpeg({
      ffmpegPath: options.ffmpegPath,
      args: buildVideoArgs({
        width,
        height,
        fps: options.fps,
        durationS: request.durationS,
        startFrame: scratch.start,
        endFrame: end ? scratch.end : undefined,
        caption: { path: scratch.caption, width: caption.width, height: caption.height, left: caption.left, top: caption.top },
        accent: hex(palette.accent),
        toneHz: request.audio ? palette.toneHz : null,
        output,
      }),
      cwd: job.workDir,
      signal,
      onOutTime: (micros) => progress.phase(PREPARED, 99, micros / totalMicros),
      log: options.log,
    });
  } finally {
    await Promise.all(Object.values(scratch).map((path) => rm(path, { force: true })));
  }
  await ctx.cache?.store(cacheKey, 'mp4', output);
  return { path: output, type: 'video', contentType: 'video/mp4', ext: 'mp4' };
}
