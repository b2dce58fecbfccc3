import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { FastifyInstance } from 'fastify';
import type { Logger } from 'pino';
import { KeyRegistry } from './auth/api-keys.js';
import { DEFAULT_CURRENCY, loadPricing, type Pricing } from './billing/index.js';
import { MODELS, createValidator, declareModels, loadModelsFile, type ModelRow, type Validator } from './catalog/index.js';
import { validationError } from './errors.js';
import { SANDBOX_CHANNEL, loadChannelsConfig, routedModels, type ChannelsConfig } from './channels/config.js';
import type { ChannelMetrics } from './channels/metrics.js';
import type { Config } from './config.js';
import { createInstantEngine } from './engines/instant.js';
import type { Engine } from './engines/types.js';
import { createLogger, createScrubber } from './logging.js';
import { InputStore, inputKey, publishingTask } from './storage/inputs.js';
import { createOutputUrls, type PresignOutput } from './storage/output-urls.js';
import { openMediaStore } from './storage/media-store.js';
import { OutputFiles } from './storage/outputs.js';
import type { BlobStore } from './storage/blobs.js';
import { UrlSigner, loadSigningState, startSigningRefresh } from './storage/signing.js';
import { startSweeper, type Sweeper } from './storage/sweeper.js';
import { sweepTurn, type SweepTurn } from './storage/sweep-turn.js';
import { openBackend, type TaskBackend } from './tasks/backend.js';
import type { TaskFeed } from './tasks/feed.js';
import { stopRemoteCancels } from './tasks/remote-cancel.js';
import { startRetentionSweep } from './tasks/retention.js';
import { TaskService } from './tasks/service.js';
import type { Store } from './store/store.js';
import type { Task } from './store/records.js';
import { WorkerPool } from './tasks/worker-pool.js';
import type { MetricsListener } from './http/metrics-listener.js';
import { Health } from './outages.js';
import { DEFAULT_EVENT_STREAM_LIMITS } from './http/event-streams.js';
import type { SchedulerTimings, UpstreamScheduler } from './tasks/upstream/scheduler.js';
import { WebhookDispatcher, type DeliveryOutcome } from './webhooks/dispatcher.js';
import type { ConnectionOptions } from 'node:tls';
import type { LookupFunction } from 'node:net';
import type { Resolve } from './outbound/url-refusal.js';

export interface MediagateOptions {
  /** Replaces the engine chosen by config (tests inject slow or failing engines). */
  readonly engine?: Engine;
  readonly logger?: Logger;
  /**
   * The routing table, already loaded (the CLI reports a bad file itself; specs read channel
   * secrets from an environment of their own). Absent: the file `config.channelsFile` names
   * (MEDIAGATE_CHANNELS_FILE) is loaded with process.env, and without one every model renders
   * in the sandbox. Tasks whose first target is another channel go upstream.
   */
  readonly channels?: ChannelsConfig;
  /**
   * The prices (MEDIAGATE_PRICING_FILE, checked by the entry so that a fault exits 78). Absent:
   * read from `config.pricingFile` here (a fault throws PricingConfigError), or nothing priced.
   */
  readonly pricing?: Pricing;
  /**
   * The declared models (MEDIAGATE_MODELS_FILE), already loaded and checked by the entry. Absent:
   * read from `config.modelsFile` here (a fault throws ModelsConfigError), or none.
   */
  readonly models?: readonly ModelRow[];
  /** The time in Unix ms, for declared models' lifecycle dates (tests move it); default Date.now. */
  readonly now?: () => number;
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
  /** The prices every process uses alike; undefined without a pricing file. */
  readonly pricing: Pricing | undefined;
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
  if (config.engine === 'instant') return createInstantEngine({ delayMs: config.instantDelayMs, outputBytes: config.instantOutputBytes });
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

/** For `mediagate secrets` and `mediagate storage check` (cli/ reaches storage/ through this module). */
export { readSigningState, rotateSigningSecret } from './storage/signing.js';
export { probeMediaStore } from './storage/probe.js';

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
function publisher(publicUrl: string, inputs: InputStore, signer: UrlSigner, service: TaskService): (bytes: Buffer, mime: string) => Promise<string> {
  return async (bytes, mime) => {
    const taskId = publishingTask.getStore();
    // Counted against the key's input bytes before it is written (TaskService.countPublishedInput).
    if (taskId !== undefined) await service.countPublishedInput(taskId, bytes.length);
    const { folder, name } = await inputs.publish(bytes, mime, taskId);
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
async function routeValidator(models: readonly ModelRow[], channels: ChannelsConfig, now: (() => number) | undefined): Promise<Validator> {
  const validator = createValidator(models, now === undefined ? {} : { now });
  if (!routesUpstream(channels)) return validator;
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
 * The routing table of this process, from one place: the table the caller loaded (the CLI, to
 * report a bad file its own way; specs, with the secrets of their own environment), else the
 * file MEDIAGATE_CHANNELS_FILE names, read here with this process's environment; without one,
 * every model renders in the sandbox.
 */
function routingTable(config: Config, options: MediagateOptions): ChannelsConfig {
  return options.channels ?? loadChannelsConfig(config.channelsFile, process.env);
}

/** The channel a model's tasks go to first: `sandbox` (rendered here) or an upstream. */
function firstChannel(channels: ChannelsConfig): (model: string) => string {
  return (model) => channels.targetsFor(model)[0]?.channel ?? SANDBOX_CHANNEL;
}

/** Whether any route leads off the sandbox (then the upstream side of the process is built). */
function routesUpstream(channels: ChannelsConfig): boolean {
  return [...channels.channels.values()].some((channel) => channel.protocol !== 'sandbox');
}

/**
 * The media store (blobs.ts) and what sits on it: outputs and stored inputs. The data directory
 * keeps only this process's scratch (attempts' work dirs, the render cache) and the SQLite file.
 */
async function prepareMedia(config: Config, blobs: BlobStore): Promise<{ workRoot: string; storage: OutputFiles; inputs: InputStore }> {
  const workRoot = join(config.dataDir, 'work');
  for (const folder of [config.dataDir, workRoot]) await mkdir(folder, { recursive: true });
  return { workRoot, storage: new OutputFiles(blobs), inputs: new InputStore({ blobs, scratch: workRoot }) };
}

/** The store (migrated), the URL signer kept on its stored secrets, and the API keys. */
async function openStore(config: Config, logger: Logger) {
  const backend = openBackendFor(config, logger);
  await backend.migrate();
  const signer = new UrlSigner(await loadSigningState(backend.store));
  // A rotation (`mediagate secrets rotate`) reaches this process at the next read, never per request.
  const stopSigningRefresh = startSigningRefresh(signer, backend.store, config.signingRefreshMs, (error) =>
    logger.warn({ err: error }, 'reading the URL signing secrets failed; keeping the current ones'),
  );
  const keys = new KeyRegistry({ store: backend.store, configured: config.apiKeys, configuredAdmin: config.adminKeys });
  const generatedKey = await keys.init();
  return { backend, signer, stopSigningRefresh, keys, generatedKey };
}

interface UpstreamParts {
  readonly config: Config;
  readonly options: MediagateOptions;
  readonly channels: ChannelsConfig;
  readonly service: TaskService;
  readonly storage: OutputFiles;
  readonly inputs: InputStore;
  readonly signer: UrlSigner;
  readonly workRoot: string;
  readonly logger: Logger;
  readonly metrics: ChannelMetrics | undefined;
}

/** What the logs and upstream texts never show: the configured API keys, the channels' keys, the metrics token. */
function secretsOf(config: Config, channels: ChannelsConfig): string[] {
  const store = config.storage.kind === 's3' ? [config.storage.credentials.secretAccessKey, config.storage.credentials.sessionToken ?? ''].filter(Boolean) : [];
  return [...config.apiKeys, ...config.adminKeys, ...channels.secrets, ...(config.metricsToken === undefined ? [] : [config.metricsToken]), ...store];
}

/**
 * The upstream side of a process, when some route leads off the sandbox: the cancel of a
 * cancelled task's upstream job (every process, API-only ones included: the one that wins a
 * cancel sends it), and with workers the scheduler. Loaded on demand: a deployment without
 * channels never loads the adapters.
 */
async function createUpstream(parts: UpstreamParts): Promise<{ scheduler: UpstreamScheduler | undefined; close(drainMs?: number): Promise<void> } | undefined> {
  const { config, options, channels, service, storage, inputs, signer, workRoot, logger, metrics } = parts;
  if (!routesUpstream(channels)) return undefined;
  const [{ UpstreamScheduler }, { UpstreamCanceller }, { createChannelContexts }, { createChannelMedia }, { ADAPTERS }] = await Promise.all([
    import('./tasks/upstream/scheduler.js'),
    import('./tasks/upstream/cancel.js'),
    import('./channels/context.js'),
    import('./channels/media.js'),
    import('./channels/protocols/index.js'),
  ]);
  const log = logger.child({ component: 'upstream' });
  const contexts = createChannelContexts(channels, {
    media: createChannelMedia(config.publicUrlExplicit ? { publish: publisher(config.publicUrl, inputs, signer, service) } : {}),
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
        scrub: createScrubber(secretsOf(config, channels)),
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

/** The render workers, with the backend's task source; none in an API-only process. */
function createPool(
  config: Config,
  engine: Engine | undefined,
  parts: { service: TaskService; storage: OutputFiles; inputs: InputStore; workRoot: string; backend: TaskBackend; log: Logger; health: Health },
): WorkerPool | undefined {
  if (engine === undefined) return undefined;
  const { service, storage, inputs, workRoot, backend, log, health } = parts;
  return new WorkerPool({
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
    storageRetryMs: config.storageRetryMs,
    health,
    source: backend.taskSource({
      service,
      concurrency: config.concurrency,
      leaseMs: config.leaseMs,
      maxAttempts: config.maxAttempts,
      localQueueSize: config.pgLocalQueue,
      log,
      health,
    }),
    log,
  });
}

/** How the webhook dispatcher reports an attempt: known only at startWork. */
interface WebhookHooks {
  observe: ((outcome: DeliveryOutcome) => void) | undefined;
}

/**
 * Where workers run, webhooks are delivered: an API-only process leaves them to the workers.
 * Payloads carry output URLs as a status poll on the API would: signed with `signer`, on
 * `publicUrl` (an API process's address, known at listen; else MEDIAGATE_PUBLIC_URL).
 */
function createWebhooks(
  config: Config,
  options: MediagateOptions,
  core: { store: Store; service: TaskService; signer: UrlSigner; publicUrl: () => string; pricing: Pricing | undefined; presign: PresignOutput | undefined },
  logger: Logger,
  hooks: WebhookHooks,
) {
  if (!config.workers) return undefined;
  const { store, service, signer, publicUrl, pricing, presign } = core;
  return new WebhookDispatcher({
    store,
    service,
    urlFor: createOutputUrls({ signer, publicUrl, outputTtlMs: config.outputTtlMs, presign }),
    currency: pricing?.currency ?? DEFAULT_CURRENCY,
    allow: { hosts: config.fetchAllowHosts, private: config.fetchAllowPrivate },
    timeoutMs: config.webhookTimeoutMs,
    caps: { perEndpoint: config.webhookPerEndpoint, perKey: config.webhookPerKey },
    log: logger.child({ component: 'webhooks' }),
    observe: (outcome) => hooks.observe?.(outcome),
    ...(config.webhookRetryScheduleMs === undefined ? {} : { retryScheduleMs: config.webhookRetryScheduleMs }),
    ...(options.webhookTls === undefined ? {} : { tls: options.webhookTls }),
    ...(options.webhookLookup === undefined ? {} : { lookup: options.webhookLookup }),
    ...(options.webhookPollIntervalMs === undefined ? {} : { pollIntervalMs: options.webhookPollIntervalMs }),
  });
}

/** The output sweeper and the task retention sweep, both on MEDIAGATE_SWEEP_INTERVAL_S. */
function startSweeps(config: Config, service: TaskService, store: Store, storage: OutputFiles, workRoot: string, logger: Logger): Sweeper[] {
  // A bucket is shared by every process and its listings are paid requests: one process lists it
  // per interval. A data directory is listed by each process (its readdir costs nothing).
  const turn = (name: string): { listingTurn?: SweepTurn } =>
    config.storage.kind === 's3' ? { listingTurn: sweepTurn(store, name, config.sweepIntervalMs) } : {};
  return [
    startSweeper({
      storage,
      outputTtlMs: config.outputTtlMs,
      workRoot,
      // A scratch directory outlives its attempt by at most a render and a lost lease.
      workDirMaxAgeMs: config.renderTimeoutMs + config.leaseMs * 2,
      renderCacheRoot: join(config.dataDir, 'render-cache'),
      intervalMs: config.sweepIntervalMs,
      log: logger,
      ...turn('outputs'),
    }),
    startRetentionSweep({ service, storage, retentionMs: config.taskRetentionMs, intervalMs: config.sweepIntervalMs, log: logger, ...turn('inputs') }),
  ];
}

interface Core {
  readonly process: MediagateProcess;
  /** The routing table this process runs with (routingTable). */
  readonly channels: ChannelsConfig;
  readonly storage: OutputFiles;
  readonly inputs: InputStore;
  /** Signs and verifies file URLs; kept on the stored secrets by a background refresh (rotation). */
  readonly signer: UrlSigner;
  /** The task feed of this backend (tasks/feed.ts); the caller closes it. */
  readonly openFeed: () => TaskFeed;
  /** Starts the workers, if any, the sweeper and the webhook dispatcher, whose attempts `observe` counts. */
  readonly startWork: (observe?: (outcome: DeliveryOutcome) => void) => Promise<void>;
  /** What this process cannot do now (outages.ts): readiness and the metrics read it. */
  readonly health: Health;
}

/**
 * Store (migrated), keys, task service, storage, engine and worker pool; nothing runs yet.
 * `publicUrl`: the base of output URLs in webhook payloads (an API process learns it at listen).
 * `channelMetrics`: where the upstream lifecycle records (the process's /metrics registry).
 */
async function createCore(config: Config, options: MediagateOptions, publicUrl: () => string, channelMetrics?: ChannelMetrics): Promise<Core> {
  // First: the channels and pricing files may name declared ids, and every list of models below includes them.
  declareModels(options.models ?? loadModelsFile(config.modelsFile, MODELS));
  const channels = routingTable(config, options);
  const pricing = options.pricing ?? loadPricing(config.pricingFile);
  const secrets = secretsOf(config, channels);
  const logger = options.logger ?? createLogger({ level: config.logLevel, secrets, format: config.logFormat });
  const blobs = await openMediaStore(config);
  const { workRoot, storage, inputs } = await prepareMedia(config, blobs);
  // A store that fails to open must not leave the media store's connections holding the process.
  const { backend, signer, stopSigningRefresh, keys, generatedKey } = await openStore(config, logger).catch(async (error: unknown) => {
    await blobs.close();
    throw error;
  });
  const store = backend.store;
  const channelOf = firstChannel(channels);
  const service = new TaskService({ store, inputs, channelOf, inputBytesPerKey: config.keyInputBytes, ...(pricing === undefined ? {} : { pricing }) });
  const upstream = await createUpstream({ config, options, channels, service, storage, inputs, signer, workRoot, logger, metrics: channelMetrics });
  // An API-only process (`serve --no-workers`) renders nothing and loads no engine.
  const engine = config.workers ? (options.engine ?? (await chooseEngine(config, logger))) : undefined;
  const workerLog = logger.child({ component: 'worker' });
  const health = new Health();
  const pool = createPool(config, engine, { service, storage, inputs, workRoot, backend, log: workerLog, health });
  const scheduler = upstream?.scheduler;
  // Each wakes for its own tasks only: a render claim woken by every upstream task created would
  // read past all the queued upstream tasks to find none (measured: the upstream bench phase).
  service.on('created', (task: Task) => (channelOf(task.model) === SANDBOX_CHANNEL ? pool?.notify() : scheduler?.notify()));

  // One feed per process: the API's event streams and the workers' remote cancels share it.
  let feed: TaskFeed | undefined;
  const openFeed = (): TaskFeed => (feed ??= backend.openFeed(service));
  const hooks: WebhookHooks = { observe: undefined };
  const presign = config.outputUrls === 'presigned' ? storage.presigner() : undefined;
  const webhooks = createWebhooks(config, options, { store, service, signer, publicUrl, pricing, presign }, logger, hooks);
  let sweeps: Sweeper[] = [];
  return {
    process: {
      config,
      service,
      store,
      keys,
      pool,
      logger,
      pricing,
      generatedKey,
      webhooks,
      async close(drainMs = 10_000) {
        for (const sweep of sweeps) sweep.stop();
        await Promise.all([pool?.close(drainMs), upstream?.close(drainMs), webhooks?.close()]);
        await feed?.close();
        await engine?.close();
        await stopSigningRefresh();
        await backend.close();
        await blobs.close();
      },
    },
    channels,
    storage,
    inputs,
    signer,
    openFeed,
    health,
    async startWork(observeOutcome) {
      await pool?.start();
      // SQLite has one process: its cancels reach the pool through the service's own event.
      if (pool && backend.kind === 'postgres') stopRemoteCancels(openFeed(), pool, service, workerLog);
      scheduler?.start();
      hooks.observe = observeOutcome;
      webhooks?.start();
      sweeps = startSweeps(config, service, store, storage, workRoot, logger);
    },
  };
}

/**
 * Builds the whole service from a config: store (migrated), keys, validator, task service,
 * storage, engine, worker pool and HTTP server. Nothing listens until start().
 */
export async function createMediagate(config: Config, options: MediagateOptions = {}): Promise<Mediagate> {
  // Loaded here: a worker-only process never loads the HTTP stack.
  const [{ createMetrics, observeSettled }, { KeyLimits }, { buildHttpServer }, { registerHealthMetrics }] = await Promise.all([
    import('./http/metrics.js'),
    import('./http/rate-limit.js'),
    import('./http/server.js'),
    import('./http/health-metrics.js'),
  ]);
  const metrics = createMetrics();
  // With PORT=0 the address is known only after listen; output URLs follow it.
  let publicUrl = config.publicUrl;
  const {
    process: core,
    channels,
    storage,
    inputs,
    signer,
    startWork,
    openFeed,
    health,
  } = await createCore(config, options, () => publicUrl, metrics.channels);
  registerHealthMetrics(metrics.registry, health);
  const { store, keys, service } = core;
  const feed = openFeed();
  // A key another process disabled, revoked or changed is refused here at once, not after the cache's 5 s.
  feed.watchKeys(() => keys.forgetAll());
  service.on('settled', (task) => observeSettled(metrics, task));

  const models = routedModels(channels);
  const http = buildHttpServer(
    {
      models,
      ...(options.now === undefined ? {} : { now: options.now }),
      pricing: core.pricing,
      channelOf: firstChannel(channels),
      validator: await routeValidator(models, channels, options.now),
      service,
      feed,
      sseKeepAliveMs: config.sseKeepAliveMs,
      syncWaitMs: config.syncWaitMs,
      eventStreamLimits: { ...DEFAULT_EVENT_STREAM_LIMITS, maxPerKey: config.sseMaxPerKey, maxLifetimeMs: config.sseMaxLifetimeMs },
      store,
      keys,
      storage,
      inputs,
      signer,
      metrics,
      publicUrl: () => publicUrl,
      outputTtlMs: config.outputTtlMs,
      presign: config.outputUrls === 'presigned' ? storage.presigner() : undefined,
      bodyLimitBytes: config.bodyLimitBytes,
      keyLimits: new KeyLimits({
        requestsPerMinute: config.rateLimitPerMin,
        tasksInFlight: config.maxTasksInFlight,
        countActive: (owner, cap) => store.countActiveTasks(owner, cap),
        inputBytesPerKey: config.keyInputBytes,
        activeInputBytes: (owner) => service.activeInputBytes(owner),
      }),
      jsonLimits: { maxDepth: config.jsonMaxDepth, maxItems: config.jsonMaxItems, maxStringBytes: config.jsonMaxStringBytes },
      corsOrigins: config.corsOrigins,
      health,
      finalBodyCache: { maxBytes: config.finalBodyCacheBytes, retentionMs: config.taskRetentionMs },
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
      await startWork((outcome) => metrics.webhookDeliveries.inc({ outcome }));
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
  const publicUrl = (): string => config.publicUrl;
  const port = config.metricsPort;
  if (port === undefined) {
    const { process: core, startWork } = await createCore(config, options, publicUrl);
    return { ...core, start: () => startWork() };
  }
  const [
    { createTaskMetrics, observeSettled, refreshTaskGauge },
    { startMetricsListener },
    { createChannelMetrics },
    { registerHealthMetrics },
    { checkReadiness, readinessAnswer },
  ] = await Promise.all([
    import('./http/metrics.js'),
    import('./http/metrics-listener.js'),
    import('./channels/metrics.js'),
    import('./http/health-metrics.js'),
    import('./http/readiness.js'),
  ]);
  const metrics = createTaskMetrics();
  // The channel series on the same registry: a worker process is where upstream tasks run.
  const { process: core, startWork, health, storage } = await createCore(config, options, publicUrl, createChannelMetrics(metrics.registry));
  registerHealthMetrics(metrics.registry, health);
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
        refresh: () => refreshTaskGauge(metrics, core.store),
        readiness: async () => readinessAnswer(await checkReadiness({ store: core.store, storage, health })),
      });
      await startWork((outcome) => metrics.webhookDeliveries.inc({ outcome }));
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
