import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { KeyRegistry } from './auth/api-keys.js';
import { createValidator, type ModelRow, type Validator } from './catalog/index.js';
import { validationError } from './errors.js';
import { defaultChannelsConfig, routedModels, type ChannelsConfig } from './channels/config.js';
import type { ChannelMetrics } from './channels/metrics.js';
import type { Config } from './config.js';
import { createInstantEngine } from './engines/instant.js';
import type { Engine } from './engines/types.js';
import { createLogger } from './logging.js';
import { InputStore, inputKey } from './storage/inputs.js';
import { LocalStorage } from './storage/local.js';
import { UrlSigner, loadSigningState, startSigningRefresh } from './storage/signing.js';
import { startSweeper, type Sweeper } from './storage/sweeper.js';
import { openBackend, type TaskBackend } from './tasks/backend.js';
import type { TaskFeed } from './tasks/feed.js';
import { stopRemoteCancels } from './tasks/remote-cancel.js';
import { startRetentionSweep } from './tasks/retention.js';
import { TaskService } from './tasks/service.js';
import type { Store } from './store/store.js';
import type { Task } from './store/records.js';
import { WorkerPool } from './tasks/worker-pool.js';
import type { MetricsListener } from './http/metrics-listener.js';
import type { SchedulerTimings, UpstreamScheduler } from './tasks/upstream/scheduler.js';
import { WebhookDispatcher, type DeliveryOutcome } from './webhooks/dispatcher.js';
import type { ConnectionOptions } from 'node:tls';
import type { LookupFunction } from 'node:net';
import type { Resolve } from './media/url-refusal.js';

export interface MediagateOptions {
  /** Replaces the engine chosen by config (tests inject slow or failing engines). */
  readonly engine?: Engine;
  readonly logger?: Logger;
  /**
   * The routing table (MEDIAGATE_CHANNELS_FILE, loaded by the caller). Absent: every model
   * renders in the sandbox. Tasks whose first target is another channel go upstream.
   */
  readonly channels?: ChannelsConfig;
  /** Tests shorten the upstream scheduler's intervals and leases. */
  readonly upstreamTimings?: Partial<SchedulerTimings>;
  /** Per-request timeout of upstream API calls (default 30 s). */
  readonly upstreamRequestTimeoutMs?: number;
  /** Webhook connections: extra TLS options (tests trust their own CA) and DNS resolution (tests). */
  readonly webhookTls?: ConnectionOptions;
  readonly webhookLookup?: LookupFunction;
  /** Tests: DNS resolution of an endpoint's host at registration. */
  readonly webhookResolve?: Resolve;
  /** Tests: how often the webhook dispatcher looks at the store when nothing wakes it (default 1 s). */
  readonly webhookPollIntervalMs?: number;
}

/** What a serving process and a worker-only process both hold. */
export interface MediagateProcess {
  readonly config: Config;
  readonly service: TaskService;
  readonly store: Store;
  readonly keys: KeyRegistry;
  readonly pool: WorkerPool | undefined;
  readonly logger: Logger;
  /** The key created at first start when none was configured; print it once. */
  readonly generatedKey: string | undefined;
  /** The webhook dispatcher of this process (with workers); undefined in an API-only process. */
  readonly webhooks: WebhookDispatcher | undefined;
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

async function chooseEngine(config: Config, logger: Logger): Promise<Engine> {
  if (config.engine === 'instant') return createInstantEngine({ delayMs: config.instantDelayMs });
  // Loaded on demand: an API-only or instant-engine process never loads sharp or ffmpeg.
  const { createSandboxEngine } = await import('./engines/sandbox/engine.js');
  const { defaultFfmpegPath } = await import('./engines/sandbox/ffmpeg-path.js');
  return createSandboxEngine({
    ffmpegPath: config.ffmpegPath ?? defaultFfmpegPath(),
    renderTimeoutMs: config.renderTimeoutMs,
    fps: config.sandboxFps,
    decodePixelBudget: config.decodePixelBudget,
    cacheDir: join(config.dataDir, 'render-cache'),
    fetchAllow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
    log: (msg: string, extra?: object) => logger.debug(extra ?? {}, msg),
  });
}

/** For `mediagate secrets` (cli/ reaches storage/ through this module). */
export { readSigningState, rotateSigningSecret } from './storage/signing.js';

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

/** How long a published input's URL is valid: an upstream fetches it when the job is submitted. */
const PUBLISHED_INPUT_TTL_S = 3600;

/**
 * ChannelMedia.publish: a data-URL input an upstream must fetch by URL is stored under the
 * inputs folder and served at `<MEDIAGATE_PUBLIC_URL>/inputs/...`, signed and expiring
 * (http/routes/files.ts getInput). Without a public URL, upstreams get data URLs inline.
 */
function publisher(publicUrl: string, inputs: InputStore, signer: UrlSigner): (bytes: Buffer, mime: string) => Promise<string> {
  return async (bytes, mime) => {
    const { folder, name } = await inputs.publish(bytes, mime);
    const exp = Math.floor(Date.now() / 1000) + PUBLISHED_INPUT_TTL_S;
    const key = inputKey(folder, name);
    return `${publicUrl.replace(/\/$/, '')}/${key}?exp=${exp}&sig=${signer.sign(key, exp)}`;
  };
}

/**
 * The catalog's validator, and, when some route leads off the sandbox, the check of the route's
 * first target after it (docs/channels.md "Target profiles"): a parameter that target cannot
 * express is the same 400 `unsupported_value` as the catalog's own, before the task exists.
 */
async function routeValidator(models: readonly ModelRow[], channels: ChannelsConfig | undefined): Promise<Validator> {
  const validator = createValidator(models);
  if (channels === undefined || ![...channels.channels.values()].some((channel) => channel.protocol !== 'sandbox')) return validator;
  const [{ createTargetCheck }, { ADAPTERS }] = await Promise.all([import('./channels/targets.js'), import('./channels/protocols/index.js')]);
  const check = createTargetCheck(channels, ADAPTERS);
  return {
    validate(kind, input) {
      const result = validator.validate(kind, input);
      if (!result.ok) return result;
      const problem = check(result.row.id, kind, result.params);
      return problem === undefined ? result : { ok: false, error: validationError('unsupported_value', problem.param, problem.message) };
    },
  };
}

/**
 * The upstream side of a process, when some route leads off the sandbox: the cancel of a
 * cancelled task's upstream job (every process, API-only ones included: the one that wins a
 * cancel sends it), and with workers the scheduler. Loaded on demand: a deployment without
 * channels never loads the adapters.
 */
async function createUpstream(
  config: Config,
  options: MediagateOptions,
  service: TaskService,
  storage: LocalStorage,
  inputs: InputStore,
  signer: UrlSigner,
  workRoot: string,
  logger: Logger,
  metrics: ChannelMetrics | undefined,
): Promise<{ scheduler: UpstreamScheduler | undefined; close(drainMs?: number): Promise<void> } | undefined> {
  const channels = options.channels;
  if (channels === undefined || ![...channels.channels.values()].some((channel) => channel.protocol !== 'sandbox')) return undefined;
  const [{ UpstreamScheduler }, { UpstreamCanceller }, { createChannelContexts }, { createChannelMedia }, { ADAPTERS }] = await Promise.all([
    import('./tasks/upstream/scheduler.js'),
    import('./tasks/upstream/cancel.js'),
    import('./channels/context.js'),
    import('./channels/media.js'),
    import('./channels/protocols/index.js'),
  ]);
  const log = logger.child({ component: 'upstream' });
  const contexts = createChannelContexts(channels, {
    media: createChannelMedia(config.publicUrlExplicit ? { publish: publisher(config.publicUrl, inputs, signer) } : {}),
    log,
    ...(options.upstreamRequestTimeoutMs === undefined ? {} : { requestTimeoutMs: options.upstreamRequestTimeoutMs }),
  });
  const canceller = new UpstreamCanceller({ service, channels, contexts, adapters: ADAPTERS, metrics, log });
  service.on('cancelled', (task) => canceller.onCancelled(task));
  const scheduler = config.workers
    ? new UpstreamScheduler({
        service,
        channels,
        contexts,
        adapters: ADAPTERS,
        storage,
        inputs,
        workRoot,
        fetchAllow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
        log,
        metrics,
        canceller,
        ...(options.upstreamTimings === undefined ? {} : { timings: options.upstreamTimings }),
      })
    : undefined;
  return {
    scheduler,
    async close(drainMs) {
      await scheduler?.close(drainMs);
      await canceller.close(drainMs);
      await contexts.close();
    },
  };
}

interface Core {
  readonly process: MediagateProcess;
  readonly storage: LocalStorage;
  readonly inputs: InputStore;
  /** Signs and verifies file URLs; kept on the stored secrets by a background refresh (rotation). */
  readonly signer: UrlSigner;
  /** The task feed of this backend (tasks/feed.ts); the caller closes it. */
  readonly openFeed: () => TaskFeed;
  /**
   * Starts the workers, if any, the sweeper and the webhook dispatcher, whose payloads are the
   * tasks as `present` gives them (a status poll's body) and whose attempts `observe` counts.
   */
  readonly startWork: (present: (task: Task) => object, observe?: (outcome: DeliveryOutcome) => void) => Promise<void>;
}

/**
 * Store (migrated), keys, task service, storage, engine and worker pool; nothing runs yet.
 * `channelMetrics`: where the upstream lifecycle records (the process's /metrics registry).
 */
async function createCore(config: Config, options: MediagateOptions, channelMetrics?: ChannelMetrics): Promise<Core> {
  // Loaded by the entry (cli/serve.ts readChannels): routing everything to the sandbox instead would be silent.
  if (config.channelsFile !== undefined && options.channels === undefined)
    throw new Error('MEDIAGATE_CHANNELS_FILE is set: pass loadChannelsConfig(config.channelsFile, env) as options.channels');
  const secrets = [...config.apiKeys, ...(options.channels?.secrets ?? []), ...(config.metricsToken === undefined ? [] : [config.metricsToken])];
  const logger = options.logger ?? createLogger({ level: config.logLevel, secrets, format: config.logFormat });
  await mkdir(config.dataDir, { recursive: true });
  const workRoot = join(config.dataDir, 'work');
  const outputRoot = join(config.dataDir, 'outputs');
  const inputs = new InputStore(join(config.dataDir, 'inputs'));
  await mkdir(workRoot, { recursive: true });
  await mkdir(outputRoot, { recursive: true });
  await mkdir(inputs.root, { recursive: true });

  const backend = openBackendFor(config, logger);
  await backend.migrate();
  const store = backend.store;
  const signer = new UrlSigner(await loadSigningState(store));
  // A rotation (`mediagate secrets rotate`) reaches this process at the next read, never per request.
  const stopSigningRefresh = startSigningRefresh(signer, store, config.signingRefreshMs, (error) =>
    logger.warn({ err: error }, 'reading the URL signing secrets failed; keeping the current ones'),
  );
  const keys = new KeyRegistry({ store, configured: config.apiKeys });
  const generatedKey = await keys.init();
  const channels = options.channels;
  const service = new TaskService({
    store,
    inputs,
    ...(channels === undefined ? {} : { channelOf: (model: string) => channels.targetsFor(model)[0]?.channel ?? 'sandbox' }),
  });
  const storage = new LocalStorage(outputRoot);
  const upstream = await createUpstream(config, options, service, storage, inputs, signer, workRoot, logger, channelMetrics);

  // An API-only process (`serve --no-workers`) renders nothing and loads no engine.
  const engine = config.workers ? (options.engine ?? (await chooseEngine(config, logger))) : undefined;
  const workerLog = logger.child({ component: 'worker' });
  const pool = engine
    ? new WorkerPool({
        service,
        engine,
        storage,
        inputs,
        concurrency: config.concurrency,
        fetchConcurrency: config.fetchConcurrency,
        fetchPerKey: config.fetchPerKey,
        leaseMs: config.leaseMs,
        maxAttempts: config.maxAttempts,
        renderTimeoutMs: config.renderTimeoutMs,
        workRoot,
        source: backend.taskSource({
          service,
          concurrency: config.concurrency,
          leaseMs: config.leaseMs,
          maxAttempts: config.maxAttempts,
          localQueueSize: config.pgLocalQueue,
          log: workerLog,
        }),
        log: workerLog,
      })
    : undefined;
  // Each wakes for its own tasks only: a render claim woken by every upstream task created would
  // read past all the queued upstream tasks to find none (measured: the upstream bench phase).
  const rendered = (task: Task): boolean => channels === undefined || (channels.targetsFor(task.model)[0]?.channel ?? 'sandbox') === 'sandbox';
  const scheduler = upstream?.scheduler;
  service.on('created', (task: Task) => {
    if (rendered(task)) pool?.notify();
    else scheduler?.notify();
  });

  // One feed per process: the API's event streams and the workers' remote cancels share it.
  let feed: TaskFeed | undefined;
  const openFeed = (): TaskFeed => (feed ??= backend.openFeed(service));
  let sweeper: Sweeper | undefined;
  let retention: Sweeper | undefined;
  // Where workers run, webhooks are delivered: an API-only process leaves them to the workers.
  // Built now, started by startWork, which brings how tasks are presented (an API process's URLs).
  let present: ((task: Task) => object) | undefined;
  let observe: ((outcome: DeliveryOutcome) => void) | undefined;
  const webhooks = config.workers
    ? new WebhookDispatcher({
        store,
        service,
        present: (task) => {
          if (present === undefined) throw new Error('webhook dispatcher started before startWork');
          return present(task);
        },
        allow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
        timeoutMs: config.webhookTimeoutMs,
        log: logger.child({ component: 'webhooks' }),
        observe: (outcome) => observe?.(outcome),
        ...(config.webhookRetryScheduleMs === undefined ? {} : { retryScheduleMs: config.webhookRetryScheduleMs }),
        ...(options.webhookTls === undefined ? {} : { tls: options.webhookTls }),
        ...(options.webhookLookup === undefined ? {} : { lookup: options.webhookLookup }),
        ...(options.webhookPollIntervalMs === undefined ? {} : { pollIntervalMs: options.webhookPollIntervalMs }),
      })
    : undefined;
  return {
    process: {
      config,
      service,
      store,
      keys,
      pool,
      logger,
      generatedKey,
      webhooks,
      async close(drainMs = 10_000) {
        sweeper?.stop();
        retention?.stop();
        await Promise.all([pool?.close(drainMs), upstream?.close(drainMs), webhooks?.close()]);
        await feed?.close();
        await engine?.close();
        await stopSigningRefresh();
        await backend.close();
      },
    },
    storage,
    inputs,
    signer,
    openFeed,
    async startWork(presentTask, observeOutcome) {
      await pool?.start();
      // SQLite has one process: its cancels reach the pool through the service's own event.
      if (pool && backend.kind === 'postgres') stopRemoteCancels(openFeed(), pool, service, workerLog);
      scheduler?.start();
      present = presentTask;
      observe = observeOutcome;
      webhooks?.start();
      sweeper = startSweeper({
        storage,
        outputTtlMs: config.outputTtlMs,
        workRoot,
        // A scratch directory outlives its attempt by at most a render and a lost lease.
        workDirMaxAgeMs: config.renderTimeoutMs + config.leaseMs * 2,
        renderCacheRoot: join(config.dataDir, 'render-cache'),
        intervalMs: config.sweepIntervalMs,
        log: logger,
      });
      retention = startRetentionSweep({
        service,
        storage,
        retentionMs: config.taskRetentionMs,
        intervalMs: config.sweepIntervalMs,
        log: logger,
      });
    },
  };
}

/**
 * Builds the whole service from a config: store (migrated), keys, validator, task service,
 * storage, engine, worker pool and HTTP server. Nothing listens until start().
 */
export async function createMediagate(config: Config, options: MediagateOptions = {}): Promise<Mediagate> {
  // Loaded here: a worker-only process never loads the HTTP stack.
  const [{ createMetrics, observeSettled }, { KeyLimits }, { buildHttpServer }, { presentTask }] = await Promise.all([
    import('./http/metrics.js'),
    import('./http/rate-limit.js'),
    import('./http/server.js'),
    import('./http/output-urls.js'),
  ]);
  const metrics = createMetrics();
  const { process: core, storage, inputs, signer, startWork, openFeed } = await createCore(config, options, metrics.channels);
  const { store, keys, service } = core;
  const feed = openFeed();
  service.on('settled', (task) => observeSettled(metrics, task));

  // With PORT=0 the address is known only after listen; output URLs follow it.
  let publicUrl = config.publicUrl;
  const models = routedModels(options.channels ?? defaultChannelsConfig());
  const present = presentTask({ signer, publicUrl: () => publicUrl, outputTtlMs: config.outputTtlMs });
  const http = buildHttpServer(
    {
      models,
      validator: await routeValidator(models, options.channels),
      service,
      feed,
      sseKeepAliveMs: config.sseKeepAliveMs,
      store,
      keys,
      storage,
      inputs,
      signer,
      metrics,
      publicUrl: () => publicUrl,
      outputTtlMs: config.outputTtlMs,
      bodyLimitBytes: config.bodyLimitBytes,
      keyLimits: new KeyLimits({
        requestsPerMinute: config.rateLimitPerMin,
        tasksInFlight: config.maxTasksInFlight,
        countActive: (owner) => store.countActiveTasks(owner),
        inputBytesPerKey: config.keyInputBytes,
        activeInputBytes: (owner) => service.activeInputBytes(owner),
      }),
      jsonLimits: { maxDepth: config.jsonMaxDepth, maxItems: config.jsonMaxItems, maxStringBytes: config.jsonMaxStringBytes },
      corsOrigins: config.corsOrigins,
      connectionLimits: {
        headersTimeoutMs: config.headersTimeoutMs,
        requestTimeoutMs: config.requestTimeoutMs,
        maxConnections: config.maxConnections,
        maxHeaderBytes: config.maxHeaderBytes,
      },
      ...(config.metricsToken === undefined ? {} : { metricsToken: config.metricsToken }),
      webhooks: {
        maxEndpoints: config.webhookMaxEndpoints,
        allow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
        ...(options.webhookResolve === undefined ? {} : { resolve: options.webhookResolve }),
        notify: () => core.webhooks?.notify(),
      },
    },
    core.logger,
  );

  return {
    ...core,
    http,
    feed,
    async start() {
      const url = await http.listen({ port: config.port, host: config.host });
      if (config.port === 0 && !config.publicUrlExplicit) publicUrl = url;
      await startWork(present, (outcome) => metrics.webhookDeliveries.inc({ outcome }));
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
 * A worker-only process: the same store, workers and sweeper, and no HTTP server; with
 * MEDIAGATE_METRICS_PORT, a bare /metrics listener of its own (http/metrics-listener.ts).
 */
export async function createMediagateWorker(config: Config, options: MediagateOptions = {}): Promise<MediagateWorker> {
  // Webhook payloads carry output URLs as a status poll on the API would (MEDIAGATE_PUBLIC_URL).
  const { presentTask } = await import('./http/output-urls.js');
  const presenter = (signer: UrlSigner): ((task: Task) => object) =>
    presentTask({ signer, publicUrl: () => config.publicUrl, outputTtlMs: config.outputTtlMs });
  const port = config.metricsPort;
  if (port === undefined) {
    const { process: core, startWork, signer } = await createCore(config, options);
    const present = presenter(signer);
    return { ...core, start: () => startWork(present) };
  }
  const [{ createTaskMetrics, observeSettled, setTaskGauge }, { startMetricsListener }, { createChannelMetrics }] = await Promise.all([
    import('./http/metrics.js'),
    import('./http/metrics-listener.js'),
    import('./channels/metrics.js'),
  ]);
  const metrics = createTaskMetrics();
  // The channel series on the same registry: a worker process is where upstream tasks run.
  const { process: core, startWork, signer } = await createCore(config, options, createChannelMetrics(metrics.registry));
  const present = presenter(signer);
  core.service.on('settled', (task) => observeSettled(metrics, task));
  let listener: MetricsListener | undefined;
  return {
    ...core,
    async start() {
      listener = await startMetricsListener({
        metrics,
        port,
        host: config.host,
        token: config.metricsToken,
        refresh: async () => setTaskGauge(metrics, await core.store.countByStatus()),
      });
      await startWork(present, (outcome) => metrics.webhookDeliveries.inc({ outcome }));
    },
    get metricsUrl() {
      return listener?.url;
    },
    async close(drainMs) {
      await listener?.close();
      await core.close(drainMs);
    },
  };
}
