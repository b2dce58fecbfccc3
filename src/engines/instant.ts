import { writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import type { Engine, RenderJob, RenderResult } from './types.js';

/**
 * A zero-cost engine: settles every task at once with a tiny placeholder file. It exists so
 * benchmarks measure the gateway (validation, store, queue, HTTP) without rendering competing
 * for the CPU. Select it with MEDIAGATE_ENGINE=instant; never the default.
 */
export function createInstantEngine(): Engine {
  return {
    name: 'instant',
    async render(job: RenderJob): Promise<RenderResult> {
      const video = job.model.kind === 'video';
      const path = join(job.workDir, video ? 'out.mp4' : 'out.png');
      await writeFile(path, video ? 'instant engine placeholder' : 'instant engine placeholder');
      return { files: [{ path, type: video ? 'video' : 'image', contentType: video ? 'video/mp4' : 'image/png', ext: video ? 'mp4' : 'png' }] };
    },
    async close() {},
  };
}
