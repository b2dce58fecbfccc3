import { lifecycleEpoch, offeredRows, type ModelRow } from '../../catalog/index.js';
import type { HttpContext } from '../context.js';

/**
 * What is built from the offered models (the list of GET /v1/models, /openapi.json, /docs) is
 * built once and kept until a declared model's lifecycle date passes: then it is built again,
 * with retired models left out, without a restart. Without lifecycles it is built once.
 */
export function offeredView<T>(ctx: Pick<HttpContext, 'models' | 'now'>, build: (rows: readonly ModelRow[], nowMs: number) => T): () => T {
  const now = ctx.now ?? Date.now;
  const epochAt = lifecycleEpoch(ctx.models);
  let cached: { epoch: number; value: T } | undefined;
  return () => {
    const nowMs = now();
    const epoch = epochAt(nowMs);
    if (cached?.epoch !== epoch) cached = { epoch, value: build(offeredRows(ctx.models, nowMs), nowMs) };
    return cached.value;
  };
}
