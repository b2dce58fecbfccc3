import type { Health } from '../outages.js';
import { GraphileTaskSource, graphileJobs, migrateQueue } from './sources/graphile.js';
import { PollingTaskSource } from './sources/polling.js';
import type { TaskLog, TaskSource } from './sources/source.js';
import type { TaskService } from './service.js';
import { postgresFeed, serviceFeed, type TaskFeed } from './feed.js';
import { openPostgresStore } from '../store/postgres.js';
import { openSqliteStore } from '../store/sqlite.js';
import type { Store } from '../store/store.js';

/**
 * The one place that differs between the embedded mode and the scaled-out one:
 * - SQLite (default): the store in `<data dir>/mediagate.db`; workers poll the table.
 * - PostgreSQL (`DATABASE_URL`): the same store statements (store/sql/) on PostgreSQL; graphile-worker jobs,
 *   added in the statement of each task change, deliver the tasks to any number of worker
 *   processes, and a reaper gives a new job to the tasks of workers that stopped.
 */
export interface TaskBackend {
  readonly kind: 'sqlite' | 'postgres';
  readonly store: Store;
  /** Applies pending migrations: the store's versions, and on PostgreSQL the queue's schema. */
  migrate(): Promise<{ store: number[] }>;
  /** Where this process's workers take tasks from. */
  taskSource(options: TaskSourceOptions): TaskSource;
  /** The changes of tasks made by any process (tasks/feed.ts); close it before the backend. */
  openFeed(service: TaskService): TaskFeed;
  /** Closes the store (and the connection pool). Stop the task source first. */
  close(): Promise<void>;
}

export interface TaskSourceOptions {
  readonly service: TaskService;
  readonly concurrency: number;
  readonly leaseMs: number;
  readonly maxAttempts: number;
  readonly log: TaskLog;
  /** SQLite: how often workers look for work no local event announced. Default 1 s. */
  readonly pollMs?: number;
  /** PostgreSQL: how often to look for tasks of stopped workers. Default a third of the lease, at most 5 s. */
  readonly reapMs?: number;
  /** PostgreSQL: jobs a worker process fetches and locks at once (see GraphileTaskSource). Default `concurrency`. */
  readonly localQueueSize?: number;
  /** Where the source reports what keeps it from claiming (readiness, metrics). */
  readonly health?: Health;
}

export interface BackendOptions {
  /** PostgreSQL connection string; unset for the embedded SQLite store. */
  readonly databaseUrl: string | undefined;
  /** PostgreSQL connections this process keeps at most. */
  readonly pgPoolSize: number;
  readonly sqlitePath: string;
  readonly sqliteSynchronous: 'NORMAL' | 'FULL';
  /** SQLite page cache in MiB (default 64). */
  readonly sqliteCacheMb?: number;
  readonly log: TaskLog;
}

export function openBackend(options: BackendOptions): TaskBackend {
  if (options.databaseUrl === undefined) {
    const store = openSqliteStore({ path: options.sqlitePath, synchronous: options.sqliteSynchronous, cacheMb: options.sqliteCacheMb });
    return {
      kind: 'sqlite',
      store,
      async migrate() {
        return { store: await store.migrate() };
      },
      taskSource: ({ service, leaseMs, maxAttempts, log, pollMs }) =>
        new PollingTaskSource({ service, leaseMs, maxAttempts, log, ...(pollMs === undefined ? {} : { pollMs }) }),
      openFeed: (service) => serviceFeed(service, store, options.log, () => store.dataVersion()),
      close: () => store.close(),
    };
  }
  const { log, databaseUrl } = options;
  const { store, pool } = openPostgresStore({
    connectionString: options.databaseUrl,
    poolSize: options.pgPoolSize,
    jobs: graphileJobs,
    onError: (error) => log.warn({ err: error }, 'a PostgreSQL connection failed; it will be replaced'),
  });
  return {
    kind: 'postgres',
    store,
    async migrate() {
      // The queue's schema first: the store's inserts add jobs through it.
      await migrateQueue(pool, log);
      return { store: await store.migrate() };
    },
    taskSource: ({ service, concurrency, leaseMs, maxAttempts, log, reapMs, localQueueSize, health }) =>
      new GraphileTaskSource({
        pool,
        service,
        concurrency,
        leaseMs,
        maxAttempts,
        log,
        ...(reapMs === undefined ? {} : { reapMs }),
        ...(localQueueSize === undefined ? {} : { localQueueSize }),
        ...(health === undefined ? {} : { health }),
      }),
    openFeed: () => postgresFeed({ connectionString: databaseUrl, store, log }),
    close: () => store.close(),
  };
}
