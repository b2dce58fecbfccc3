import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import type { Engine, RenderJob, RenderResult } from './types.js';

export interface InstantEngineOptions {
  /**
   * How long each render takes (MEDIAGATE_INSTANT_DELAY_MS), idle, with progress reported
   * along the way: lets tests and benchmarks hold tasks in `processing` without using the CPU.
   * Default 0.
   */
  readonly delayMs?: number;
}

/**
 * A zero-cost engine: settles every task at once with a tiny placeholder file. It exists so
 * benchmarks measure the gateway (validation, store, queue, HTTP) without rendering competing
 * for the CPU. Select it with MEDIAGATE_ENGINE=instant; never the default.
 */
export function createInstantEngine(options: InstantEngineOptions = {}): Engine {
  const delayMs = options.delayMs ?? 0;
  return {
    name: 'instant',
    async render(job: RenderJob): Promise<RenderResult> {
      if (delayMs > 0) {
        const steps = 4;
        for (let step = 1; step <= steps; step += 1) {
          await sleep(delayMs / steps, undefined, { signal: job.signal });
          job.onProgress(Math.floor((step * 99) / steps));
        }
      }
      const video = job.model.kind === 'video';
      const path = join(job.workDir, video ? 'out.mp4' : 'out.png');
      await writeFile(path, video ? 'instant engine placeholder' : 'instant engine placeholder');
      return { files: [{ path, type: video ? 'video' : 'image', contentType: video ? 'video/mp4' : 'image/png', ext: video ? 'mp4' : 'png' }] };
    },
    async close() {},
  };
}
