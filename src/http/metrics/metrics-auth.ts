import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Whether an Authorization header carries the metrics token (MEDIAGATE_METRICS_TOKEN); always
 * true when none is configured. Hashes compared in constant time: the length leaks nothing.
 */
export function metricsAuthorized(header: string | undefined, token: string | undefined): boolean {
  if (token === undefined) return true;
  const given = /^Bearer +(\S+)$/i.exec(header ?? '')?.[1] ?? '';
  const digest = (value: string) => createHash('sha256').update(value).digest();
  return timingSafeEqual(digest(given), digest(token));
}
