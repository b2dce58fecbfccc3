import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
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
      const forward = httpRequest({ host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers }, (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      });
      forward.on('error', () => {
        // The upstream closed the connection. If it answered first (an early 413 for a body over
        // its cap), that answer is being relayed; if its reset beat the answer, say 502.
        if (!res.headersSent) res.writeHead(502).end();
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
  /** Starts one more API process (not behind the proxy), with a data dir of its own if asked. */
  startApi(): Promise<ServiceProcess>;
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
  /**
   * A proxy to use, and API URLs of the caller's own (in-process) API to balance over too.
   * `ownDataDirs`: each process (replacements too) gets a fresh, empty MEDIAGATE_DATA_DIR of its
   * own, removed at close: media must then live elsewhere (MEDIAGATE_STORAGE=s3).
   */
  options: { proxy?: RoundRobinProxy; alsoUpstreams?: readonly string[]; ownDataDirs?: boolean } = {},
): Promise<ScaledOut> {
  const proxy = options.proxy ?? (await startRoundRobinProxy());
  const common = { MEDIAGATE_PUBLIC_URL: proxy.url, ...env };
  const dirs: string[] = [];
  const own = async (): Promise<Record<string, string>> => {
    if (!options.ownDataDirs) return common;
    const dir = await mkdtemp(join(tmpdir(), 'mediagate-own-'));
    dirs.push(dir);
    return { ...common, MEDIAGATE_DATA_DIR: dir };
  };
  const startApi = async (): Promise<ServiceProcess> => startProcess(['serve', '--no-workers'], { ...(await own()), PORT: String(await freePort()) });
  const startWorker = async (): Promise<ServiceProcess> => startWorkerProcess(await own());
  const stop = async (service: ServiceProcess, signal: NodeJS.Signals): Promise<void> => {
    if (service.child.exitCode === null && service.child.signalCode === null) service.child.kill(signal);
    await Promise.race([service.exited, sleep(15_000)]);
  };
  const starting = [...Array.from({ length: counts.apis }, startApi), ...Array.from({ length: counts.workers }, startWorker)];
  const started = await Promise.allSettled(starting);
  const failure = started.find((result) => result.status === 'rejected');
  if (failure) {
    // Leave no process behind (it would hold the test database open).
    await Promise.all(started.flatMap((result) => (result.status === 'fulfilled' ? [stop(result.value, 'SIGKILL')] : [])));
    if (!options.proxy) await proxy.close();
    for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    throw failure.reason;
  }
  const services = started.flatMap((result) => (result.status === 'fulfilled' ? [result.value] : []));
  const apis = services.slice(0, counts.apis);
  const workers = services.slice(counts.apis);
  proxy.setUpstreams([...(options.alsoUpstreams ?? []), ...apis.map((api) => api.url)]);
  let closing = false;
  let replacing: Promise<void> = Promise.resolve();
  return {
    proxy,
    apis,
    workers,
    startApi: async () => {
      const api = await startApi();
      apis.push(api);
      return api;
    },
    replaceWorker(index) {
      replacing = replacing
        .catch(() => {})
        .then(async () => {
          const old = workers[index];
          if (closing || !old) return;
          await stop(old, 'SIGKILL');
          workers[index] = await startWorker();
        });
      return replacing;
    },
    async close() {
      closing = true;
      await replacing.catch(() => {});
      await Promise.all([...apis, ...workers].map((service) => stop(service, 'SIGTERM')));
      await proxy.close();
      for (const dir of dirs) await rm(dir, { recursive: true, force: true });
    },
  };
}
