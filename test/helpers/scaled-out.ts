import { request as httpRequest, createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { setTimeout as sleep } from 'node:timers/promises';
import { freePort, startProcess, startWorkerProcess, type ServiceProcess } from './process.js';

/**
 * A round-robin HTTP proxy in front of several API processes, as a load balancer would be.
 * Upstreams are set after it listens, so that they can be told its URL (MEDIAGATE_PUBLIC_URL).
 */
export interface RoundRobinProxy {
  readonly url: string;
  setUpstreams(urls: readonly string[]): void;
  /** Requests sent to each upstream so far. */
  readonly counts: Map<string, number>;
  close(): Promise<void>;
}

export async function startRoundRobinProxy(): Promise<RoundRobinProxy> {
  let upstreams: readonly URL[] = [];
  let next = 0;
  const counts = new Map<string, number>();
  const server: Server = createServer((req, res) => {
    const upstream = upstreams[next++ % upstreams.length];
    if (!upstream) {
      res.writeHead(503).end();
      return;
    }
    counts.set(upstream.origin, (counts.get(upstream.origin) ?? 0) + 1);
    // Like nginx (proxy_request_buffering on), the body is read whole before it is forwarded.
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on('end', () => {
      const forward = httpRequest(
        { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
        (answer) => {
          res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
          answer.pipe(res);
        },
      );
      forward.on('error', () => {
        // The upstream answered early (413) and closed before taking the whole body: its answer stands.
        if (!res.headersSent) res.writeHead(502);
        if (!res.writableEnded && !res.headersSent) res.end();
      });
      forward.end(Buffer.concat(chunks));
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    counts,
    setUpstreams(urls) {
      upstreams = urls.map((url) => new URL(url));
    },
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ScaledOut {
  readonly proxy: RoundRobinProxy;
  readonly apis: ServiceProcess[];
  readonly workers: ServiceProcess[];
  /** SIGKILLs worker `index` and starts a new one in its place. */
  replaceWorker(index: number): Promise<void>;
  close(): Promise<void>;
}

/**
 * The scaled-out topology from child processes: `apis` x `mediagate serve --no-workers` behind
 * a round-robin proxy, and `workers` x `mediagate worker`, on one PostgreSQL (env DATABASE_URL)
 * and one data directory (env MEDIAGATE_DATA_DIR). Output URLs point at the proxy.
 */
export async function startScaledOut(
  env: Record<string, string>,
  counts: { apis: number; workers: number },
  /** A proxy to use, and API URLs of the caller's own (in-process) API to balance over too. */
  options: { proxy?: RoundRobinProxy; alsoUpstreams?: readonly string[] } = {},
): Promise<ScaledOut> {
  const proxy = options.proxy ?? (await startRoundRobinProxy());
  const shared = { MEDIAGATE_PUBLIC_URL: proxy.url, ...env };
  const apis = await Promise.all(
    Array.from({ length: counts.apis }, async () => startProcess(['serve', '--no-workers'], { ...shared, PORT: String(await freePort()) })),
  );
  proxy.setUpstreams([...(options.alsoUpstreams ?? []), ...apis.map((api) => api.url)]);
  const workers = await Promise.all(Array.from({ length: counts.workers }, () => startWorkerProcess(shared)));
  const stop = async (service: ServiceProcess, signal: NodeJS.Signals): Promise<void> => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
    await Promise.race([service.exited, sleep(15_000)]);
  };
  return {
    proxy,
    apis,
    workers,
    async replaceWorker(index) {
      const old = workers[index];
      if (old) await stop(old, 'SIGKILL');
      workers[index] = await startWorkerProcess(shared);
    },
    async close() {
      await Promise.all([...apis, ...workers].map((service) => stop(service, 'SIGTERM')));
      await proxy.close();
    },
  };
}
