import { randomBytes } from 'node:crypto';
import { mkdir, readdir, rm, stat } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { KeyRegistry } from './auth/api-keys.js';
import { MODELS, createValidator } from './catalog/index.js';
import type { Config } from './config.js';
import { createInstantEngine } from './engines/instant.js';
import type { Engine } from './engines/types.js';
import { buildHttpApp } from './http/app.js';
import { createMetrics } from './http/metrics.js';
import { KeyLimits } from './http/rate-limit.js';
import { createLogger } from './logging.js';
import { LocalStorage } from './storage/local.js';
import { UrlSigner } from './storage/signing.js';
import { openBackend, type TaskBackend } from './tasks/backend.js';
import { TaskService } from './tasks/service.js';
import type { TaskStore } from './tasks/store/store.js';
import { WorkerPool } from './tasks/worker-pool.js';

export interface MediagateOptions {
  /** Replaces the engine chosen by config (tests inject slow or failing engines). */
  readonly engine?: Engine;
  readonly logger?: Logger;
}

export interface Mediagate {
  readonly config: Config;
  readonly http: FastifyInstance;
  readonly service: TaskService;
  readonly store: TaskStore;
  readonly keys: KeyRegistry;
  readonly pool: WorkerPool | undefined;
  readonly logger: Logger;
  /** The key created at first start when none was configured; print it once. */
  readonly generatedKey: string | undefined;
  /** Starts listening (and the workers); resolves with the bound address. */
  start(): Promise<{ url: string }>;
  /** `{ http: false }`: starts the workers only, nothing listens (`mediagate worker`). */
  start(options: { http: false }): Promise<{ url: undefined }>;
  /** Graceful stop: no new requests or tasks, running renders finish or are handed back. */
  close(drainMs?: number): Promise<void>;
}

async function chooseEngine(config: Config, logger: Logger): Promise<Engine> {
  if (config.engine === 'instant') return createInstantEngine({ delayMs: config.instantDelayMs });
  // Loaded on demand: an API-only or instant-engine process never loads sharp or ffmpeg.
  const { createSandboxEngine } = await import('./engines/sandbox/engine.js');
  const { defaultFfmpegPath } = await import('./engines/sandbox/ffmpeg-path.js');
  return createSandboxEngine({
    ffmpegPath: config.ffmpegPath ?? defaultFfmpegPath(),
    renderTimeoutMs: config.renderTimeoutS * 1000,
    fps: config.sandboxFps,
    cacheDir: join(config.dataDir, 'render-cache'),
    fetchAllow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
    log: (msg: string, extra?: object) => logger.debug(extra ?? {}, msg),
  });
}

/** Removes scratch directories of attempts that died with their process. */
async function sweepWorkDirs(root: string, olderThanMs: number): Promise<void> {
  for (const entry of await readdir(root).catch(() => [] as string[])) {
    const path = join(root, entry);
    const info = await stat(path).catch(() => undefined);
    if (info && info.mtimeMs < olderThanMs) await rm(path, { recursive: true, force: true }).catch(() => {});
  }
}

/**
 * The task backend a configuration names: PostgreSQL at DATABASE_URL (store and job queue), or
 * SQLite in the data directory. Not migrated yet: see TaskBackend.migrate.
 */
export function openBackendFor(config: Config, logger: Logger): TaskBackend {
  return openBackend({
    databaseUrl: config.databaseUrl,
    pgPoolSize: config.pgPoolSize,
    sqlitePath: join(config.dataDir, 'mediagate.db'),
    sqliteSynchronous: config.sqliteSynchronous,
    sqliteCacheMb: config.sqliteCacheMb,
    log: logger.child({ component: 'store' }),
  });
}

/**
 * Builds the whole service from a config: store (migrated), keys, validator, task service,
 * storage, engine, worker pool and HTTP app. Nothing listens until start().
 */
export async function createMediagate(config: Config, options: MediagateOptions = {}): Promise<Mediagate> {
  const logger =
    options.logger ??
    createLogger({ level: config.logLevel, secrets: config.apiKeys });
  await mkdir(config.dataDir, { recursive: true });
  const workRoot = join(config.dataDir, 'work');
  const outputRoot = join(config.dataDir, 'outputs');
  await mkdir(workRoot, { recursive: true });
  await mkdir(outputRoot, { recursive: true });

  const backend = openBackendFor(config, logger);
  await backend.migrate();
  const store = backend.store;
  const secret = await store.initMeta('url_signing_secret', randomBytes(32).toString('base64url'));
  const keys = new KeyRegistry({ store, configured: config.apiKeys });
  const generatedKey = await keys.init();

  const service = new TaskService({ store });
  const storage = new LocalStorage(outputRoot);
  const metrics = createMetrics();
  service.on('settled', ({ status }) => metrics.tasksSettled.inc({ status }));

  // An API-only process (`serve --no-workers`) renders nothing and loads no engine.
  const engine = config.workers ? (options.engine ?? (await chooseEngine(config, logger))) : undefined;
  const workerLog = logger.child({ component: 'worker' });
  const pool = engine
    ? new WorkerPool({
        service,
        engine,
        storage,
        concurrency: config.concurrency,
        leaseMs: config.leaseS * 1000,
        maxAttempts: config.maxAttempts,
        renderTimeoutMs: config.renderTimeoutS * 1000,
        workRoot,
        source: backend.taskSource({
          service,
          concurrency: config.concurrency,
          leaseMs: config.leaseS * 1000,
          maxAttempts: config.maxAttempts,
          localQueueSize: config.pgLocalQueue,
          log: workerLog,
        }),
        log: workerLog,
      })
    : undefined;
  if (pool) service.on('created', () => pool.notify());

  // With PORT=0 the address is known only after listen; output URLs follow it.
  let publicUrl = config.publicUrl;
  const http = buildHttpApp(
    {
      validator: createValidator(MODELS),
      service,
      store,
      keys,
      storage,
      signer: new UrlSigner(Buffer.from(secret)),
      metrics,
      publicUrl: () => publicUrl,
      outputTtlS: config.outputTtlS,
      bodyLimitBytes: config.bodyLimitBytes,
      logLevel: config.logLevel,
      keyLimits: new KeyLimits({
        requestsPerMinute: config.rateLimitPerMin,
        tasksInFlight: config.maxTasksInFlight,
        countActive: (owner) => store.countActiveTasks(owner),
      }),
      jsonLimits: { maxDepth: config.jsonMaxDepth, maxItems: config.jsonMaxItems, maxStringBytes: config.jsonMaxStringBytes },
      corsOrigins: config.corsOrigins,
    },
    logger,
  );

  let sweepTimer: NodeJS.Timeout | undefined;
  const sweep = async (): Promise<void> => {
    const now = Date.now();
    const removed = await storage.sweep(now - config.outputTtlS * 1000);
    if (removed > 0) logger.info({ removed }, 'expired outputs deleted');
    await sweepWorkDirs(workRoot, now - (config.renderTimeoutS + config.leaseS * 2) * 1000);
    // Render cache entries live as long as the outputs they were made for.
    await sweepWorkDirs(join(config.dataDir, 'render-cache'), now - config.outputTtlS * 1000);
  };

  function start(): Promise<{ url: string }>;
  function start(options: { http: false }): Promise<{ url: undefined }>;
  async function start(options?: { http: false }): Promise<{ url: string | undefined }> {
    let address: string | undefined;
    if (options?.http !== false) {
      address = await http.listen({ port: config.port, host: config.host });
      if (config.port === 0 && !config.publicUrlExplicit) publicUrl = address;
    }
    await pool?.start();
    void sweep().catch((error: unknown) => logger.warn({ err: error }, 'sweep failed'));
    sweepTimer = setInterval(() => {
      sweep().catch((error: unknown) => logger.warn({ err: error }, 'sweep failed'));
    }, config.sweepIntervalS * 1000);
    sweepTimer.unref();
    return { url: address };
  }

  return {
    config,
    http,
    service,
    store,
    keys,
    pool,
    logger,
    generatedKey,
    start,
    async close(drainMs = 10_000) {
      if (sweepTimer) clearInterval(sweepTimer);
      await http.close();
      await pool?.close(drainMs);
      await engine?.close();
      await backend.close();
    },
  };
}
