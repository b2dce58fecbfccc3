import type { Metrics } from '../metrics/metrics.js';

interface Series {
  count: { inc(): void };
  duration: { observe(value: number): void };
}

/** Records one request in the request counter and duration histogram. */
export type RecordRequest = (route: string, method: string, status: number, seconds: number) => void;

/**
 * prom-client hashes a label object on every call; a labelled child is resolved once per
 * (route, method, status) and kept (at most 1000 of them: routes are patterns, not URLs).
 */
export function createRequestRecorder(metrics: Metrics): RecordRequest {
  const series = new Map<string, Series>();
  return (route, method, status, seconds) => {
    const key = `${route} ${method} ${status}`;
    let found = series.get(key);
    if (!found) {
      found = { count: metrics.requests.labels(route, method, String(status)), duration: metrics.duration.labels(route) };
      if (series.size < 1000) series.set(key, found);
    }
    found.count.inc();
    found.duration.observe(seconds);
  };
}
