import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import type { KeyRegistry } from './auth/api-keys.js';
import type { Pricing } from './billing/index.js';
import type { Config } from './config.js';
import type { TaskFeed } from './tasks/feed.js';
import type { TaskService } from './tasks/service.js';
import type { Store } from './store/store.js';
import type { WorkerPool } from './tasks/worker-pool.js';
import type { WebhookDispatcher } from './webhooks/dispatcher.js';
import { adminKeysModule } from './modules/admin-keys.js';
import { channelsModule } from './modules/channels.js';
import { filesModule } from './modules/files.js';
import { openFloors, type Floors } from './modules/floors.js';
import { frontDoorsModule } from './modules/frontdoors.js';
import { closeModules, routesOf, startModules, type Module } from './modules/module.js';
import type { MediagateOptions } from './modules/options.js';
import { tasksModule } from './modules/tasks.js';
import { usageModule } from './modules/usage.js';
import { webhooksModule } from './modules/webhooks.js';

/**
 * The composition root: a list of modules (src/modules/, one per feature) over the shared floors
 * (modules/floors.ts: store, media, signing, keys, the task service). What a feature does lives
 * in its module; adding one is a module file and a line in a list below (docs/architecture.md,
 * "Adding a feature"). Used by the CLI and the specs.
 */
export type { MediagateOptions } from './modules/options.js';
export type { Module } from './modules/module.js';
export { openBackendFor } from './modules/floors.js';
/** For `mediagate secrets` and `mediagate storage check` (cli/ reaches storage/ through this module). */
export { readSigningState, rotateSigningSecret } from './storage/signing.js';
export { probeMediaStore } from './storage/probe.js';

/** What a serving process and a worker-only process both hold. */
export interface MediagateProcess {
  readonly config: Config;
  readonly service: TaskService;
  readonly store: Store;
  readonly keys: KeyRegistry;
  readonly pool: WorkerPool | undefined;
  readonly logger: Logger;
  /** The prices every process uses alike; undefined without a pricing file. */
  readonly pricing: Pricing | undefined;
  /** The key created at first start when none was configured; print it once. */
  readonly generatedKey: string | undefined;
  /** The webhook dispatcher of this process (with workers); undefined in an API-only process. */
  readonly webhooks: WebhookDispatcher | undefined;
  /** The features this process runs, in start order (specs await their loops). */
  readonly modules: readonly Module[];
  /** Graceful stop: no new requests or tasks, running renders finish or are handed back. */
  close(drainMs?: number): Promise<void>;
}

/** The whole service: the HTTP API, and the workers unless `config.workers` is false. */
export interface Mediagate extends MediagateProcess {
  readonly http: FastifyInstance;
  /** Changes of tasks made by any process, which the event streams follow. */
  readonly feed: TaskFeed;
  /** Starts listening (and the workers); resolves with the bound address. */
  start(): Promise<{ url: string }>;
}

/** A worker-only process (`mediagate worker`): renders tasks, builds no HTTP server. */
export interface MediagateWorker extends MediagateProcess {
  start(): Promise<void>;
  /** The worker's /metrics URL once started, when MEDIAGATE_METRICS_PORT is set. */
  readonly metricsUrl?: string | undefined;
}

/** The modules every process runs: a worker-only process runs these and no other. */
async function workModules(floors: Floors) {
  try {
    const tasks = await tasksModule(floors);
    const channels = await channelsModule(floors);
    const webhooks = webhooksModule(floors);
    return { tasks, channels, webhooks, list: [tasks, channels, webhooks, filesModule(floors)] };
  } catch (error) {
    // A module that fails to build must not leave the store or the media store holding the process.
    await floors.close();
    throw error;
  }
}

/** The process's handle on its floors and modules; `close` stops the modules, then the floors. */
function processOf(floors: Floors, work: Awaited<ReturnType<typeof workModules>>, modules: readonly Module[]): MediagateProcess {
  const { config, service, store, keys, logger, pricing, generatedKey } = floors;
  return {
    config,
    service,
    store,
    keys,
    logger,
    pricing,
    generatedKey,
    modules,
    pool: work.tasks.pool,
    webhooks: work.webhooks.dispatcher,
    async close(drainMs = 10_000) {
      await closeModules(modules, drainMs);
      await floors.close();
    },
  };
}

/**
 * Builds the whole service from a config: the floors, every module, and the HTTP server over
 * their route rows. Nothing listens or runs until start().
 */
export async function createMediagate(config: Config, options: MediagateOptions = {}): Promise<Mediagate> {
  // Loaded here: a worker-only process never loads the HTTP stack.
  const [{ apiMetrics, apiObservabilityModule }, { buildServer }] = await Promise.all([import('./modules/observability.js'), import('./modules/server.js')]);
  const metrics = apiMetrics();
  // With PORT=0 the address is known only after listen; output URLs follow it.
  let publicUrl = config.publicUrl;
  const floors = await openFloors(config, options, () => publicUrl, metrics.channels);
  const work = await workModules(floors);
  const modules = [...work.list, usageModule(), adminKeysModule(floors), frontDoorsModule(), apiObservabilityModule(floors, metrics, work.webhooks)];
  const core = processOf(floors, work, modules);
  const feed = floors.openFeed();
  const http = await buildServer(floors, { routes: routesOf(modules), metrics, channels: work.channels, webhooks: work.webhooks }).catch(
    async (error: unknown) => {
      // Nothing runs yet, but the store and the media store are open.
      await core.close(0);
      throw error;
    },
  );
  return {
    ...core,
    http,
    feed,
    async start() {
      const url = await http.listen({ port: config.port, host: config.host });
      if (config.port === 0 && !config.publicUrlExplicit) publicUrl = url;
      await startModules(modules);
      return { url };
    },
    async close(drainMs) {
      await http.close();
      await feed.close();
      await core.close(drainMs);
    },
  };
}

/**
 * A worker-only process: the work modules over the same floors, and no HTTP server; with
 * MEDIAGATE_METRICS_PORT, a bare /metrics listener of its own (http/metrics/metrics-listener.ts).
 */
export async function createMediagateWorker(config: Config, options: MediagateOptions = {}): Promise<MediagateWorker> {
  // Webhook payloads carry output URLs as a status poll on the API would (MEDIAGATE_PUBLIC_URL).
  const publicUrl = (): string => config.publicUrl;
  const port = config.metricsPort;
  if (port === undefined) {
    const floors = await openFloors(config, options, publicUrl);
    const work = await workModules(floors);
    return { ...processOf(floors, work, work.list), start: () => startModules(work.list) };
  }
  const { workerMetrics, workerObservabilityModule } = await import('./modules/observability.js');
  const { metrics, channels } = workerMetrics();
  const floors = await openFloors(config, options, publicUrl, channels);
  const work = await workModules(floors);
  const observability = workerObservabilityModule(floors, metrics, work.webhooks, port);
  const modules = [observability, ...work.list];
  return {
    ...processOf(floors, work, modules),
    start: () => startModules(modules),
    get metricsUrl() {
      return observability.url;
    },
  };
}
