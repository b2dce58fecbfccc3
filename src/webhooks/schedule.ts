/**
 * When a failed delivery is tried again: the delay after attempt n is `schedule[n - 1]`, give or
 * take 20% (jitter, so that the retries of many deliveries that failed together spread out). The
 * default makes 9 attempts over about 32 hours, the first retry within 6 s (decisions 8.5: at
 * least 8 attempts over at least 24 hours, the first retry within a minute).
 */
export const DEFAULT_RETRY_SCHEDULE_MS: readonly number[] = [
  5_000,
  60_000,
  5 * 60_000,
  30 * 60_000,
  2 * 3_600_000,
  5 * 3_600_000,
  10 * 3_600_000,
  14 * 3_600_000,
];

export const JITTER = 0.2;

/** The delay before the attempt after attempt `attempts` (1-based); undefined when none is left. */
export function retryDelay(schedule: readonly number[], attempts: number, random: () => number = Math.random): number | undefined {
  const base = schedule[attempts - 1];
  if (base === undefined) return undefined;
  return Math.max(0, Math.round(base * (1 - JITTER + 2 * JITTER * random())));
}
