import type { Metrics } from '../metrics/metrics.js';

interface Series {
  count: { inc(): void };
  duration: { observe(value: number): void };
}

/** Records one request in the request counter and duration histogram. */
export type RecordRequest = (route: string, method: string, status: number, seconds: number) => void;

/**
 * prom-client hashes a label object on every call; a series is resolved once per (route, method,
 * status) and kept (at most 1000 of them: routes are patterns, not URLs), its count a tally
 * (metrics.ts, TalliedCounter).
 */
export function createRequestRecorder(metrics: Metrics): RecordRequest {
  const series = new Map<string, Series>();
  return (route, method, status, seconds) => {
    const key = `${route} ${method} ${status}`;
    let found = series.get(key);
    if (!found) {
      const labels = { route, method, status: String(status) };
      // A tally is kept for good: only a series that is kept gets one.
      if (series.size < 1000) {
        found = { count: metrics.requests.tally(labels), duration: metrics.duration.labels(route) };
        series.set(key, found);
      } else found = { count: metrics.requests.labels(labels), duration: metrics.duration.labels(route) };
    }
    found.count.inc();
    found.duration.observe(seconds);
  };
}
