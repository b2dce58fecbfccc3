import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import type { Logger } from 'pino';
import { KeyRegistry } from '../auth/api-keys.js';
import { loadPricing, type Pricing } from '../billing/index.js';
import { MODELS, declareModels, loadModelsFile } from '../catalog/index.js';
import { SANDBOX_CHANNEL, loadChannelsConfig, type ChannelsConfig } from '../channels/config.js';
import type { ChannelMetrics } from '../channels/metrics.js';
import type { Config } from '../config.js';
import { createLogger } from '../logging.js';
import { Health } from '../outages.js';
import type { BlobStore } from '../storage/blobs.js';
import { InputStore } from '../storage/inputs.js';
import { openMediaStore } from '../storage/media-store.js';
import { OutputFiles } from '../storage/outputs.js';
import { UrlSigner, loadSigningState } from '../storage/signing.js';
import { openBackend, type TaskBackend } from '../tasks/backend.js';
import type { TaskFeed } from '../tasks/feed.js';
import { TaskService } from '../tasks/service.js';
import type { Store } from '../store/store.js';
import type { MediagateOptions } from './options.js';

/**
 * What every module stands on, opened once per process: the routing table and prices, the
 * logger, the media store (outputs, stored inputs, the scratch root), the store (migrated) and
 * its task feed, the URL signer, the API keys, the task service (the only writer of task
 * state) and the process's health. Modules take what they need from here; none builds its own.
 */
export interface Floors {
  readonly config: Config;
  readonly options: MediagateOptions;
  readonly logger: Logger;
  /** The routing table this process runs with (routingTable). */
  readonly channels: ChannelsConfig;
  readonly pricing: Pricing | undefined;
  /** What the logs and upstream texts never show. */
  readonly secrets: readonly string[];
  readonly workRoot: string;
  readonly storage: OutputFiles;
  readonly inputs: InputStore;
  readonly backend: TaskBackend;
  readonly store: Store;
  /** Signs and verifies file URLs; kept on the stored secrets by the files module's refresh loop. */
  readonly signer: UrlSigner;
  readonly keys: KeyRegistry;
  /** The key created at first start when none was configured; print it once. */
  readonly generatedKey: string | undefined;
  readonly service: TaskService;
  /** What this process cannot do now (outages.ts): readiness and the metrics read it. */
  readonly health: Health;
  /** The channel a model's tasks go to first: `sandbox` (rendered here) or an upstream. */
  readonly channelOf: (model: string) => string;
  /** The base of output URLs (an API process learns it at listen). */
  readonly publicUrl: () => string;
  /** Where the upstream lifecycle records (the process's /metrics registry), when there is one. */
  readonly channelMetrics: ChannelMetrics | undefined;
  /** The task feed of this backend (tasks/feed.ts), one per process, opened on first use. */
  openFeed(): TaskFeed;
  /** Closes the feed, the store and the media store (after every module has closed). */
  close(): Promise<void>;
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

/** What the logs and upstream texts never show: the configured API keys, the channels' keys, the metrics token, the bucket's secrets. */
function secretsOf(config: Config, channels: ChannelsConfig): string[] {
  const store = config.storage.kind === 's3' ? [config.storage.credentials.secretAccessKey, config.storage.credentials.sessionToken ?? ''].filter(Boolean) : [];
  return [...config.apiKeys, ...config.adminKeys, ...channels.secrets, ...(config.metricsToken === undefined ? [] : [config.metricsToken]), ...store];
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

/** The store (migrated), the URL signer on its stored secrets, and the API keys. */
async function openStore(config: Config, logger: Logger) {
  const backend = openBackendFor(config, logger);
  try {
    await backend.migrate();
    const signer = new UrlSigner(await loadSigningState(backend.store));
    const keys = new KeyRegistry({ store: backend.store, configured: config.apiKeys, configuredAdmin: config.adminKeys });
    const generatedKey = await keys.init();
    return { backend, signer, keys, generatedKey };
  } catch (error) {
    await backend.close().catch(() => {});
    throw error;
  }
}

export async function openFloors(config: Config, options: MediagateOptions, publicUrl: () => string, channelMetrics?: ChannelMetrics): Promise<Floors> {
  // First: the channels and pricing files may name declared ids, and every list of models below includes them.
  declareModels(options.models ?? loadModelsFile(config.modelsFile, MODELS));
  // The caller's table (the CLI reports a bad file its own way; specs bring their own secrets),
  // else the file MEDIAGATE_CHANNELS_FILE names, read with this process's environment.
  const channels = options.channels ?? loadChannelsConfig(config.channelsFile, process.env);
  const pricing = options.pricing ?? loadPricing(config.pricingFile);
  const secrets = secretsOf(config, channels);
  const logger = options.logger ?? createLogger({ level: config.logLevel, secrets, format: config.logFormat });
  const blobs = await openMediaStore(config);
  const { workRoot, storage, inputs } = await prepareMedia(config, blobs);
  // A store that fails to open must not leave the media store's connections holding the process.
  const { backend, signer, keys, generatedKey } = await openStore(config, logger).catch(async (error: unknown) => {
    await blobs.close();
    throw error;
  });
  const store = backend.store;
  const channelOf = (model: string): string => channels.targetsFor(model)[0]?.channel ?? SANDBOX_CHANNEL;
  const service = new TaskService({ store, inputs, channelOf, inputBytesPerKey: config.keyInputBytes, ...(pricing === undefined ? {} : { pricing }) });
  // One feed per process: the API's event streams and the workers' remote cancels share it.
  let feed: TaskFeed | undefined;
  return {
    config,
    options,
    logger,
    channels,
    pricing,
    secrets,
    workRoot,
    storage,
    inputs,
    backend,
    store,
    signer,
    keys,
    generatedKey,
    service,
    health: new Health(),
    channelOf,
    publicUrl,
    channelMetrics,
    openFeed: () => (feed ??= backend.openFeed(service)),
    async close() {
      await feed?.close();
      await backend.close();
      await blobs.close();
    },
  };
}
