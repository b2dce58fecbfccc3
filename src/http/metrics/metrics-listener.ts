import { createServer, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { metricsAuthorized } from './metrics-auth.js';
import type { TaskMetrics } from './metrics.js';

export interface MetricsListener {
  readonly url: string;
  close(): Promise<void>;
}

/**
 * The /metrics of a `mediagate worker` process (MEDIAGATE_METRICS_PORT), and its /readyz: a
 * bare node:http listener, so a worker loads no HTTP framework. `refresh` runs before each
 * scrape (the tasks gauge reads the store).
 */
export async function startMetricsListener(options: {
  readonly metrics: TaskMetrics;
  readonly port: number;
  readonly host: string;
  readonly token: string | undefined;
  readonly refresh: () => Promise<void>;
  /** `GET /readyz` (no token, as on the API): whether this worker can work (http/metrics/readiness.ts). */
  readonly readiness?: () => Promise<{ status: number; headers: Record<string, string>; body: object }>;
}): Promise<MetricsListener> {
  const { metrics, token, refresh, readiness } = options;
  const answer = (res: ServerResponse, status: number, body: string, headers: Record<string, string> = {}) => {
    res.writeHead(status, { 'content-type': 'text/plain; charset=utf-8', 'cache-control': 'no-store', ...headers });
    res.end(body);
  };
  const server: Server = createServer((req, res) => {
    const path = (req.url ?? '').split('?')[0];
    if (path === '/readyz' && readiness !== undefined && (req.method === 'GET' || req.method === 'HEAD')) {
      readiness().then(
        (ready) =>
          answer(res, ready.status, req.method === 'HEAD' ? '' : JSON.stringify(ready.body), {
            ...ready.headers,
            'content-type': 'application/json; charset=utf-8',
          }),
        () => answer(res, 500, 'readiness unavailable\n'),
      );
      return;
    }
    if (path !== '/metrics') return answer(res, 404, 'not found\n');
    if (req.method !== 'GET' && req.method !== 'HEAD') return answer(res, 405, 'method not allowed\n', { allow: 'GET, HEAD' });
    if (!metricsAuthorized(req.headers.authorization, token)) return answer(res, 401, 'unauthorized\n', { 'www-authenticate': 'Bearer' });
    refresh()
      .then(() => metrics.registry.metrics())
      .then(
        (text) => answer(res, 200, req.method === 'HEAD' ? '' : text, { 'content-type': metrics.registry.contentType }),
        () => answer(res, 500, 'metrics unavailable\n'),
      );
  });
  server.headersTimeout = 10_000;
  server.requestTimeout = 30_000;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host === '0.0.0.0' ? '127.0.0.1' : host}:${port}/metrics`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
