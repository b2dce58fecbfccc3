import type { MetaStore } from '../store/store.js';

/**
 * Whose turn it is to run a sweep that lists media every process shares (an S3 bucket). Every
 * process sweeps on the same interval, and each listing costs about one request per 1,000
 * objects: taken in turns, a deployment lists its bucket about once an interval, not once per
 * process. The turn is a due time in the store's meta, taken with a compare-and-set, so two
 * processes never both take one. It is given back to the others after half an interval, so a
 * process whose timer fires a moment early still finds one due, and the sweep never waits for
 * a process that has stopped.
 */
export type SweepTurn = (now: number) => Promise<boolean>;

export function sweepTurn(store: Pick<MetaStore, 'initMeta' | 'swapMeta'>, name: string, intervalMs: number): SweepTurn {
  const key = `sweep-turn:${name}`;
  return async (now) => {
    const due = await store.initMeta(key, '0');
    if (Number(due) > now) return false;
    return store.swapMeta(key, due, String(now + Math.floor(intervalMs / 2)), []);
  };
}
