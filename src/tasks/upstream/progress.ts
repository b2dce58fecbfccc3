/**
 * Progress of an upstream task (docs/guides/channels.md#what-clients-see): the upstream's own figure when it gives
 * one, else an estimate from the time it has run; never going back; at most 99 until the output
 * is stored.
 */

/** Time constant of the estimate: about 63 % after this long running, 95 % after three times it. */
const ESTIMATE_TAU_MS = 60_000;

export function nextProgress(previous: number | null, upstream: number | undefined, runningForMs: number): number {
  const raw = upstream ?? 95 * (1 - Math.exp(-Math.max(0, runningForMs) / ESTIMATE_TAU_MS));
  return Math.min(99, Math.max(previous ?? 0, Math.round(raw)));
}
