import { errors, type ApiError } from '../../errors.js';
import { OUTAGE_RETRY_AFTER_S, OUTAGE_SEEN_MS, outageOf, type Health } from '../../outages.js';

/**
 * The answer to an error that is a dependency's outage: a 503 `service_unavailable` with
 * Retry-After, so that a client can tell it from a bug and knows when to try again; undefined
 * for any other error. The process's health learns of it (the metrics show it for a few seconds
 * unless seen again; readiness probes for itself).
 */
export function outageAnswer(error: unknown, health: Health | undefined): ApiError | undefined {
  const dependency = outageOf(error);
  if (dependency === undefined) return undefined;
  health?.set(dependency, `the ${dependency === 'database' ? 'database' : 'media store'} is unreachable`, OUTAGE_SEEN_MS);
  return errors.serviceUnavailable(dependency, OUTAGE_RETRY_AFTER_S, error);
}
