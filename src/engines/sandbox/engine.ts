/**
 * The built-in sandbox engine: real media that honour every resolved parameter (size, duration,
 * audio, first and last frame), made locally from the inputs, the prompt and the seed.
 */
import sharp from 'sharp';
import type { FetchOptions } from '../../media/fetcher.js';
import { createFetchDispatcher } from '../../outbound/connection.js';
import { EngineError, type Engine, type FetchedInputs, type InputJob, type RenderJob, type RenderResult } from '../types.js';
import { fetchImageInputs, httpsImageInputs } from './inputs.js';
import { renderImage } from './image.js';
import { checkReferenceUrls } from './reference-urls.js';
import { RenderCache } from './render-cache.js';
import { PixelBudget } from './pixel-budget.js';
import { resolveSandboxOptions, type SandboxEngineOptions } from './options.js';
import { ProgressReporter } from './progress.js';
import { renderVideo } from './video.js';

export type { SandboxEngineOptions } from './options.js';

export function createSandboxEngine(input: SandboxEngineOptions): Engine {
  const options = resolveSandboxOptions(input);
  // The engine owns the connection pool it creates, and closes it with itself.
  const ownDispatcher = options.fetch.dispatcher === undefined ? createFetchDispatcher({ allow: options.fetchAllow }) : undefined;
  const fetch: Omit<FetchOptions, 'signal'> = { ...options.fetch, dispatcher: options.fetch.dispatcher ?? ownDispatcher };
  const cache = options.cacheDir === undefined ? undefined : new RenderCache(options.cacheDir);
  // One engine per process, so its budget is the process's.
  const decodeBudget = new PixelBudget(options.decodePixelBudget);
  // libvips' operation cache would keep decoded user images alive after their render (up to
  // 50 MB and 100 operations by default) outside the budget; inputs rarely repeat, so no cache.
  sharp.cache(false);

  return {
    name: 'sandbox',

    inputUrls(job: Pick<RenderJob, 'model' | 'params'>): readonly string[] {
      return job.model.kind === 'video' ? httpsImageInputs(job.params).map((input) => input.url) : [];
    },

    fetchInputs(job: InputJob): Promise<FetchedInputs> {
      return job.model.kind === 'video' ? fetchImageInputs(job.params, { fetch, signal: job.signal }) : Promise.resolve(new Map());
    },

    async render(job: RenderJob): Promise<RenderResult> {
      const deadline = new AbortController();
      const timer = setTimeout(
        () => deadline.abort(new EngineError('timeout', '', `the render took longer than ${Math.round(options.renderTimeoutMs / 1000)} s`)),
        options.renderTimeoutMs,
      );
      // Whichever comes first, cancel or deadline, its reason is what the render rejects with.
      const signal = AbortSignal.any([job.signal, deadline.signal]);
      const progress = new ProgressReporter(job.onProgress);
      try {
        signal.throwIfAborted();
        progress.report(0);
        await checkReferenceUrls(job.params, options.fetchAllow, signal);
        const file =
          job.model.kind === 'image'
            ? await renderImage(job, options)
            : await renderVideo(job, { options, fetch, signal, progress, decodeBudget, ...(cache ? { cache } : {}) });
        signal.throwIfAborted();
        return { files: [file] };
      } finally {
        clearTimeout(timer);
      }
    },

    async close(): Promise<void> {
      await ownDispatcher?.close();
    },
  };
}
