import autocannon, { type Request } from 'autocannon';

export interface LoadResult {
  readonly rps: number;
  readonly p50: number;
  readonly p99: number;
  readonly requests: number;
  readonly non2xx: number;
  readonly errors: number;
}

export interface LoadOptions {
  readonly url: string;
  readonly connections: number;
  readonly durationS: number;
  readonly requests?: Request[];
  readonly headers?: Record<string, string>;
  readonly amount?: number;
}

/** One autocannon run, the same client settings for every phase so the ratios compare. */
export async function load(options: LoadOptions): Promise<LoadResult> {
  const result = await autocannon({
    url: options.url,
    connections: options.connections,
    duration: options.durationS,
    ...(options.amount !== undefined ? { amount: options.amount } : {}),
    headers: options.headers ?? {},
    ...(options.requests ? { requests: options.requests } : {}),
  });
  return {
    rps: Math.round(result.requests.average),
    p50: result.latency.p50,
    p99: result.latency.p99,
    requests: result.requests.total,
    non2xx: result.non2xx,
    errors: result.errors + result.timeouts,
  };
}
