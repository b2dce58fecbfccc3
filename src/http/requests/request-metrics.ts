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
 * (metrics.ts, TalliedCounter). Kept by route, then method and status, rather than under a key
 * made of the three: the route and method are the same strings each time, whose hash is known.
 */
export function createRequestRecorder(metrics: Metrics): RecordRequest {
  const series = new Map<string, Map<string, Series>>();
  let kept = 0;
  return (route, method, status, seconds) => {
    const ofRoute = series.get(route);
    // The common answer's key is the method itself: no string is made for it.
    const key = status === 200 ? method : `${method} ${status}`;
    let found = ofRoute?.get(key);
    if (!found) {
      const labels = { route, method, status: String(status) };
      // A tally is kept for good: only a series that is kept gets one.
      if (kept < 1000) {
        found = { count: metrics.requests.tally(labels), duration: metrics.duration.labels(route) };
        if (ofRoute === undefined) series.set(route, new Map([[key, found]]));
        else ofRoute.set(key, found);
        kept += 1;
      } else found = { count: metrics.requests.labels(labels), duration: metrics.duration.labels(route) };
    }
    found.count.inc();
    found.duration.observe(seconds);
  };
}
