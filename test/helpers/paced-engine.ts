import type { Engine } from '../../src/engines/types.js';

/**
 * Wraps an engine so that tasks whose prompt contains `[slow]` report progress in `steps` steps
 * of `stepMs` before the real render: the real sandbox finishes too fast to watch a progress
 * bar or to interrupt a wait.
 */
export function pacedEngine(inner: Engine, stepMs = 120, steps = 10): Engine {
  return {
    name: 'paced',
    async render(job) {
      if (typeof job.params['prompt'] === 'string' && job.params['prompt'].includes('[slow]')) {
        for (let step = 1; step <= steps; step++) {
          await new Promise((resolve) => setTimeout(resolve, stepMs));
          job.signal.throwIfAborted();
          job.onProgress(Math.floor((step * 90) / steps));
        }
      }
      return inner.render(job);
    },
    close: () => inner.close(),
  };
}
