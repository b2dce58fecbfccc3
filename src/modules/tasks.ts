import { join } from 'node:path';
import type { Logger } from 'pino';
import { SANDBOX_CHANNEL } from '../channels/config.js';
import { createInstantEngine } from '../engines/instant.js';
import type { Engine } from '../engines/types.js';
import { MODEL_ROUTES, TASK_ROUTES } from '../http/routes.js';
import { sweepTurn } from '../storage/sweep-turn.js';
import { stopRemoteCancels } from '../tasks/remote-cancel.js';
import { retentionLoop } from '../tasks/retention.js';
import { WorkerPool } from '../tasks/worker-pool.js';
import { fieldsOf } from '../config-fields.js';
import type { Floors } from './floors.js';
import type { ConfigSlice, Module } from './module.js';
import { TASKS_SLICE } from './slices/tasks.js';

/** Its own settings (slices/tasks.ts) and the shared ones it reads. */
const CONFIG = [
  ...fieldsOf(TASKS_SLICE),
  'workers',
  'renderTimeoutMs',
  'dataDir',
  'fetchAllowHosts',
  'fetchAllowPrivate',
  'concurrency',
  'leaseMs',
  'maxAttempts',
  'pgLocalQueue',
  'taskRetentionMs',
  'sweepIntervalMs',
  'storage',
] as const;
type TasksConfig = ConfigSlice<(typeof CONFIG)[number]>;

/** Tasks and rendering: the task routes, the render workers and the retention sweep. */
export interface TasksModule extends Module {
  /** The render workers; none in an API-only process. */
  readonly pool: WorkerPool | undefined;
}

async function chooseEngine(config: TasksConfig, logger: Logger): Promise<Engine> {
  if (config.engine === 'instant') return createInstantEngine({ delayMs: config.instantDelayMs, outputBytes: config.instantOutputBytes });
  // Loaded on demand: an API-only or instant-engine process never loads sharp or ffmpeg.
  const { createSandboxEngine } = await import('../engines/sandbox/engine.js');
  const { defaultFfmpegPath } = await import('../engines/sandbox/ffmpeg-path.js');
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

/** The render workers, with the backend's task source. */
function createPool(config: TasksConfig, engine: Engine, floors: Floors, log: Logger): WorkerPool {
  const { service, storage, inputs, workRoot, backend, health } = floors;
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

export async function tasksModule(floors: Floors): Promise<TasksModule> {
  const config: TasksConfig = floors.config;
  const { service, store, storage, logger, backend } = floors;
  // An API-only process (`serve --no-workers`) renders nothing and loads no engine.
  const engine = config.workers ? (floors.options.engine ?? (await chooseEngine(config, logger))) : undefined;
  const log = logger.child({ component: 'worker' });
  const pool = engine === undefined ? undefined : createPool(config, engine, floors, log);
  // Woken for sandbox tasks only: a render claim woken by every upstream task created would read
  // past all the queued upstream tasks to find none (the channels module wakes its own).
  if (pool)
    service.on('created', (task) => {
      if (floors.channelOf(task.model) === SANDBOX_CHANNEL) pool.notify();
    });
  // A bucket is shared by every process and its listings are paid requests: one process lists it
  // per interval. A data directory is listed by each process (its readdir costs nothing).
  const listingTurn = config.storage.kind === 's3' ? { listingTurn: sweepTurn(store, 'inputs', config.sweepIntervalMs) } : {};
  const retention = retentionLoop({ service, storage, retentionMs: config.taskRetentionMs, intervalMs: config.sweepIntervalMs, log: logger, ...listingTurn });
  return {
    name: 'tasks',
    config: CONFIG,
    routes: [...TASK_ROUTES, ...MODEL_ROUTES],
    loops: [retention],
    pool,
    async start() {
      await pool?.start();
      // SQLite has one process: its cancels reach the pool through the service's own event.
      if (pool && backend.kind === 'postgres') stopRemoteCancels(floors.openFeed(), pool, service, log);
    },
    async close(drainMs) {
      await pool?.close(drainMs);
      await engine?.close();
    },
  };
}
